// "Ask the docs" for any docs site: one <script src=".../widget.js" data-…> tag, no build step, no framework.
// /widget.js serves turn.js (what a finished turn does, shared with the chat page) in front of this file.
// Everything lives in a shadow root, so the host page's styles and ours never meet. The answer HTML comes from
// this server's own templates (escaped there, like the chat page); visitor text is only ever set as textContent.
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || window.__docsChatWidget) return;
  window.__docsChatWidget = true;
  var server = (script.getAttribute("data-server") || new URL(script.src, location.href).origin).replace(/\/+$/, "");
  var label = script.getAttribute("data-label") || "Ask the docs";
  var version = script.getAttribute("data-version") || "";
  var KEY = "docs-chat-thread:" + server;
  var OWNER = "docs-chat-owner:" + server;  // proves this tab started its thread; without it a follow-up forks
  var FOLLOW_UP = "Ask a follow-up question…";

  function load(key) { try { return sessionStorage.getItem(key); } catch (err) { return null; } }
  function keep(key, value) { try { sessionStorage.setItem(key, value); } catch (err) { /* private mode */ } }
  function drop(key) { try { sessionStorage.removeItem(key); } catch (err) { /* private mode */ } }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text) node.textContent = text;
    return node;
  }

  var host = el("div", { id: "docs-chat-widget" });
  var root = host.attachShadow({ mode: "open" });
  root.appendChild(el("link", { rel: "stylesheet", href: server + "/static/widget.css" }));
  var launcher = el("button", { type: "button", class: "launcher", "aria-expanded": "false", "aria-controls": "panel" }, label);
  var panel = el("section", { id: "panel", class: "panel", role: "dialog", "aria-label": label, hidden: "" });
  var head = el("header", { class: "panel-head" });
  head.appendChild(el("h2", {}, label));
  var close = el("button", { type: "button", class: "close", "aria-label": "Close" }, "×");
  head.appendChild(close);
  var thread = el("div", { class: "thread", "aria-live": "polite" });
  var form = el("form", { class: "composer" });
  var input = el("input", { type: "text", name: "question", maxlength: "1000", autocomplete: "off", "aria-label": "Your question",
                            placeholder: "Ask a question about these docs…" });
  form.appendChild(input);
  form.appendChild(el("button", { type: "submit" }, "Ask"));
  panel.appendChild(head); panel.appendChild(thread); panel.appendChild(form);
  root.appendChild(launcher); root.appendChild(panel);
  (document.body || document.documentElement).appendChild(host);

  function toggle(open) {
    panel.hidden = !open;
    launcher.setAttribute("aria-expanded", String(open));
    if (open) input.focus(); else launcher.focus();
  }
  launcher.addEventListener("click", function () { toggle(panel.hidden); });
  close.addEventListener("click", function () { toggle(false); });
  root.addEventListener("keydown", function (e) {
    if (DocsChatTurn.cardKeys(e)) return;  // Escape inside a citation card closes the card, not the panel
    if (e.key === "Escape" && !panel.hidden) toggle(false);
  });

  // Server HTML uses this server's paths; inside the host page they must point back here.
  function absolutise(node) {
    node.querySelectorAll("a[href^='/']").forEach(function (a) {
      if (a.getAttribute("href").indexOf("//") !== 0) a.setAttribute("href", server + a.getAttribute("href"));
    });
    node.querySelectorAll("form:not(.feedback-reason), .audit-link").forEach(function (f) { f.remove(); });
    return node;
  }
  function fragment(html) {
    var t = document.createElement("template");
    t.innerHTML = html;
    return absolutise(t.content);
  }

  function failed(turn, question, message) {
    turn.textContent = "";
    turn.className = "turn state-failed"; turn.setAttribute("data-state", "failed");
    turn.appendChild(el("h3", { class: "question" }, question));
    turn.appendChild(el("p", { class: "error", role: "alert" }, message));
    var retry = el("button", { type: "button", class: "retry" }, "Retry");
    retry.addEventListener("click", function () { turn.remove(); ask(question); });
    turn.appendChild(retry);
  }

  function ask(question) {
    var turn = el("article", { class: "turn state-pending", "data-state": "pending", "aria-busy": "true" });
    turn.appendChild(el("h3", { class: "question" }, question));
    var looked = el("div", { class: "looked-slot" }), claims = el("ol", { class: "claims" });
    var progress = el("p", { class: "progress" }, "Checking the docs…");
    turn.appendChild(claims); turn.appendChild(looked); turn.appendChild(progress);  // the answer first, as in the finished turn
    thread.appendChild(turn);
    var params = new URLSearchParams({ question: question, turn: "w" + Math.random().toString(36).slice(2, 10), thread: load(KEY) || "new" });
    if (load(OWNER)) params.set("owner", load(OWNER));
    if (version) params.set("version", version);
    var source = new EventSource(server + "/ask/stream?" + params.toString());  // no credentials: an anonymous visitor
    var finished = false;
    var heard = DocsChatTurn.watchdog(function () { return !finished; }, function () {
      finished = true; source.close(); failed(turn, question, "The answer is taking too long.");
    });
    source.addEventListener("owner", function (e) { heard(); keep(OWNER, e.data); });
    source.addEventListener("thread", function (e) { heard(); keep(KEY, e.data); });
    source.addEventListener("retrieved", function (e) { heard(); looked.textContent = ""; looked.appendChild(fragment(e.data)); });
    source.addEventListener("claim", function (e) { heard(); claims.appendChild(fragment(e.data)); });
    source.addEventListener("writing", function () { heard(); });  // the model words the quotes shown: not a stall
    source.addEventListener("done", function (e) {
      finished = true; source.close();
      var done = fragment(e.data), article = done.querySelector("article");
      if (article && article.getAttribute("data-state") === "failed") { failed(turn, question, (article.querySelector(".error") || {}).textContent || "Not answered."); return; }
      turn.replaceWith(done);
      thread.lastElementChild && thread.lastElementChild.scrollIntoView({ block: "nearest" });
      input.placeholder = FOLLOW_UP;
    });
    source.onerror = function () {
      if (finished) return;
      finished = true; source.close();
      failed(turn, question, "Could not reach the docs assistant, or the connection dropped.");
    };
  }

  // The thread survives page changes within the tab: show it again when the panel first opens.
  var restored = false;
  launcher.addEventListener("click", function () {
    if (restored) return;
    restored = true;
    var stored = load(KEY);
    if (!stored) return;
    fetch(server + "/ask/thread?thread=" + encodeURIComponent(stored), { credentials: "omit" })
      .then(function (r) {
        if (r.status === 400) { drop(KEY); drop(OWNER); }  // not a thread this server signed (e.g. its secret changed): start afresh
        return r.ok ? r.text() : "";
      })
      .then(function (html) {
        if (!html) return;
        thread.insertBefore(fragment(html), thread.firstChild); input.placeholder = FOLLOW_UP;
        DocsChatTurn.markRated(thread);  // a turn rated before the page changed says so
      })
      .catch(function () { /* the panel still works; only the earlier turns are missing */ });
  });

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var question = input.value.replace(/\s+/g, " ").trim();
    if (!question) return;
    input.value = "";
    ask(question);
  });
  // Touch: cards open and close by tap, as on the chat page (turn.js).
  var coarse = window.matchMedia && matchMedia("(pointer: coarse)").matches;
  root.addEventListener("click", function (e) { DocsChatTurn.cardClick(e, root, coarse); });
  // Feedback as on the chat page (turn.js, served in front of this file): JSON to this server (CORS, no cookies).
  DocsChatTurn.feedback(root, server, "omit");
  root.addEventListener("click", function (e) {
    var copy = e.target.closest(".copy-answer");
    if (copy && navigator.clipboard) navigator.clipboard.writeText(DocsChatTurn.absoluteLinks(copy.getAttribute("data-markdown"), copy.closest(".turn"), server))
      .then(function () { copy.textContent = "Copied"; });
  });
  root.addEventListener("mouseover", function (e) { var c = e.target.closest(".cite"); if (c) c.classList.remove("closed"); });

  // A card opens below its chip (above it when the thread has no room below), always inside the panel:
  // fixed, so the thread's scroll box cannot cut it, and moved left when the chip sits near the right edge.
  var GAP = 8;
  function place(cite) {
    var card = cite.querySelector(".card"), chip = cite.querySelector(".chip");
    if (!card || !chip || !card.offsetHeight) return;
    var at = chip.getBoundingClientRect(), box = panel.getBoundingClientRect(), room = thread.getBoundingClientRect();
    var width = Math.min(384, box.width - 2 * GAP);
    card.style.width = width + "px";
    card.style.left = Math.max(box.left + GAP, Math.min(at.left, box.right - GAP - width)) + "px";
    var height = card.offsetHeight, fits = at.bottom + height <= room.bottom;
    card.style.top = (fits || at.top - height < room.top ? Math.min(at.bottom, room.bottom - height) : at.top - height) + "px";
  }
  function placeFrom(e) { var c = e.target.closest && e.target.closest(".cite"); if (c) place(c); }
  root.addEventListener("mouseover", placeFrom);
  root.addEventListener("focusin", placeFrom);
  root.addEventListener("click", function (e) {  // the first tap on a touch screen opens the card (above)
    var c = e.target.closest(".cite.open");
    if (c) place(c);
  });
  thread.addEventListener("scroll", function () {  // an open card follows its chip
    root.querySelectorAll(".cite").forEach(function (c) { if (c.querySelector(".card") && c.querySelector(".card").offsetHeight) place(c); });
  }, { passive: true });
})();
