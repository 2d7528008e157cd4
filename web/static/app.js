// Small progressive enhancements; the chat, cards and docs viewer all work without this file.
(function () {
  "use strict";
  var PENDING = "docs-chat:highlight";

  // Cards open on hover and keyboard focus (CSS); Escape closes the focused one; arrows reach its actions (turn.js).
  document.addEventListener("keydown", function (e) {
    if (DocsChatTurn.cardKeys(e)) return;
    if (e.key !== "Escape") return;
    document.querySelectorAll(".cite.open").forEach(function (c) { c.classList.remove("open"); });
    var cite = document.activeElement && document.activeElement.closest && document.activeElement.closest(".cite");
    if (cite) cite.classList.add("closed");
  });
  document.addEventListener("focusin", function (e) {
    var cite = e.target.closest && e.target.closest(".cite");
    if (cite) cite.classList.remove("closed");
  });
  document.addEventListener("mouseover", function (e) {
    var cite = e.target.closest && e.target.closest(".cite");
    if (cite) cite.classList.remove("closed");
  });

  // Touch screens: cards open and close by tap (turn.js, shared with the widget).
  var coarse = window.matchMedia && window.matchMedia("(pointer: coarse)").matches;
  document.addEventListener("click", function (e) {
    if (DocsChatTurn.cardClick(e, document, coarse)) return;
    // Remember which quote a source link was opened for, so the docs viewer can mark it even where
    // the browser hides or ignores the text fragment.
    var link = e.target.closest && e.target.closest("a[data-quote]");
    if (link) {
      try {
        localStorage.setItem(PENDING, JSON.stringify({ path: new URL(link.href, location.href).pathname,
          quote: link.getAttribute("data-quote"), at: Date.now() }));
      } catch (err) { /* storage may be disabled; the text fragment still works */ }
    }
  });

  // Without this file the page works as plain forms; these controls only make sense with it.
  document.documentElement.classList.add("js");
  var reduced = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  function thread() { return document.getElementById("thread"); }
  function composer() { return document.getElementById("ask"); }
  function clearAskError() { var box = document.getElementById("ask-error"); if (box) box.textContent = ""; }

  // A turn that could not be answered: the question, what went wrong, and Retry (never a silent re-ask).
  function failedTurn(question, message) {
    var turn = document.createElement("article"), head = document.createElement("header");
    turn.className = "turn state-failed"; turn.setAttribute("data-state", "failed");
    head.className = "turn-head";
    var h = document.createElement("h2"); h.className = "question"; h.textContent = question; head.appendChild(h);
    var badge = document.createElement("span"); badge.className = "badge badge-failed"; badge.textContent = "Not answered";
    head.appendChild(badge); turn.appendChild(head);
    var error = document.createElement("div"); error.className = "error"; error.setAttribute("role", "alert");
    error.textContent = message; turn.appendChild(error);
    var retry = document.createElement("button"); retry.type = "button"; retry.className = "retry";
    retry.setAttribute("data-question", question); retry.textContent = "Retry"; turn.appendChild(retry);
    return turn;
  }
  function fail(pending, question, message) {
    var turn = failedTurn(question, message);
    if (pending && pending.parentNode) {
      pending.parentNode.insertBefore(turn, pending);
      if (window.htmx) htmx.remove(pending); else pending.remove();  // htmx.remove also closes its event stream
    } else if (thread()) thread().appendChild(turn);
    return turn;
  }
  var NETWORK = "Could not reach the docs assistant. Check your connection and retry.";
  var DROPPED = "The connection dropped before the answer was complete.";
  var SLOW = "The answer is taking too long.";
  function askedIn(elt) {
    var input = elt && elt.querySelector && elt.querySelector("[name=question]");
    return input ? input.value : "";
  }
  document.addEventListener("htmx:beforeRequest", function (e) {
    var form = e.detail && e.detail.elt;
    if (form && form.id === "ask") clearAskError();
  });
  document.addEventListener("htmx:afterRequest", function (e) {
    var form = e.detail && e.detail.elt;
    if (!form || !form.matches || !form.matches("#ask, .suggestions form")) return;
    if (e.detail.successful && form.id === "ask") form.reset();
    if (e.detail.failed && e.detail.xhr && e.detail.xhr.status >= 500) fail(null, askedIn(form), NETWORK);
  });
  ["htmx:sendError", "htmx:timeout"].forEach(function (name) {
    document.addEventListener(name, function (e) {
      var form = e.detail && e.detail.elt;
      if (form && form.matches && form.matches("#ask, .suggestions form")) fail(null, askedIn(form), name === "htmx:timeout" ? SLOW : NETWORK);
    });
  });

  // Streams: a drop or a silence ends in a message with Retry (the silence is turn.js's watchdog, as in the widget).
  var heard = new WeakMap();
  function watch(turn) {
    if (heard.has(turn)) return;
    heard.set(turn, DocsChatTurn.watchdog(function () { return turn.isConnected && turn.getAttribute("data-state") === "pending"; },
                                          function () { fail(turn, turn.getAttribute("data-question") || "", SLOW); }));
  }
  document.addEventListener("htmx:load", function (e) {  // a pending turn is watched from the moment it is shown
    var root = e.detail && e.detail.elt;
    if (!root || !root.querySelectorAll) return;
    if (root.matches && root.matches(".turn[data-state=pending]")) watch(root);
    root.querySelectorAll(".turn[data-state=pending]").forEach(watch);
  });
  document.addEventListener("htmx:sseMessage", function (e) {
    var t = e.target.closest && e.target.closest(".turn");
    if (t && heard.has(t)) heard.get(t)();
  });
  document.addEventListener("htmx:sseError", function (e) {
    var pending = e.target.closest && e.target.closest(".turn[data-state=pending]");
    if (pending) fail(pending, pending.getAttribute("data-question") || "", DROPPED);
  });

  // Retry asks the same question again in the same thread; the failed turn makes way for the new one.
  document.addEventListener("click", function (e) {
    var retry = e.target.closest && e.target.closest(".retry");
    if (!retry || !composer()) return;
    e.preventDefault();
    var input = document.getElementById("question");
    input.value = retry.getAttribute("data-question") || "";
    var turn = retry.closest(".turn");
    if (turn) turn.remove();
    composer().requestSubmit();
  });

  // Feedback (turn.js, shared with the widget): same-origin, with the visitor's cookies.
  DocsChatTurn.feedback(document, "", "same-origin");

  // Copy the answer (Markdown with quotes and links, rendered by the server) and code blocks.
  function copied(button, text) {
    var label = button.textContent;
    navigator.clipboard.writeText(text).then(function () {
      button.textContent = "Copied"; setTimeout(function () { button.textContent = label; }, 1500);
    }, function () { button.textContent = "Copy failed"; });
  }
  document.addEventListener("click", function (e) {
    var copy = e.target.closest && e.target.closest(".copy-answer");
    if (copy) { copied(copy, DocsChatTurn.absoluteLinks(copy.getAttribute("data-markdown"), copy.closest(".turn"), "")); return; }
    var code = e.target.closest && e.target.closest(".copy-code");
    if (code) copied(code, code.parentNode.querySelector("pre").innerText);
  });
  function enhance(root) {
    root.querySelectorAll("pre").forEach(function (pre) {
      if (pre.parentNode.classList.contains("code-block")) return;
      var wrap = document.createElement("div"); wrap.className = "code-block";
      pre.parentNode.insertBefore(wrap, pre); wrap.appendChild(pre);
      var b = document.createElement("button"); b.type = "button"; b.className = "copy-code"; b.textContent = "Copy";
      b.setAttribute("aria-label", "Copy code"); wrap.appendChild(b);
    });
  }
  // Streamed and swapped fragments arrive by several routes (htmx swaps, SSE swaps): watch the DOM instead.
  var scheduled = false;
  new MutationObserver(function () {
    if (scheduled) return;
    scheduled = true;
    (window.requestAnimationFrame || setTimeout)(function () { scheduled = false; enhance(document); });
  }).observe(document.documentElement, { childList: true, subtree: true });

  // A new turn scrolls into view when it arrives, and the composer now asks for a follow-up.
  function askForFollowUp() {
    var input = document.getElementById("question");
    if (input && input.getAttribute("data-follow-up")) input.placeholder = input.getAttribute("data-follow-up");
  }
  document.addEventListener("htmx:afterSwap", function (e) {
    if (e.detail && e.detail.target && e.detail.target.id === "thread") {
      var turns = e.detail.target.querySelectorAll(".turn");
      if (turns.length) turns[turns.length - 1].scrollIntoView({ block: "start", behavior: reduced ? "auto" : "smooth" });
      if (turns.length) askForFollowUp();
    }
  });
  // A thread opened or reloaded shows its latest turn, where the conversation goes on (not its first, nor
  // wherever the browser last left the scroll bar); an address with its own #anchor keeps it.
  function showLatest() {
    var turns = thread() ? thread().querySelectorAll(".turn") : [];
    if (!turns.length || location.hash) return;
    if ("scrollRestoration" in history) history.scrollRestoration = "manual";
    turns[turns.length - 1].scrollIntoView({ block: "start" });
  }

  // Docs viewer: mark the quoted span (whitespace- and case-insensitive, across inline elements).
  var BLOCK = /^(P|LI|TD|TH|H[1-6]|PRE|DT|DD|BLOCKQUOTE|DIV|ARTICLE)$/;
  function blockOf(node) {
    var el = node.parentElement;
    while (el && !BLOCK.test(el.tagName)) el = el.parentElement;
    return el;
  }
  function textIndex(root) {
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT), text = "", map = [], space = true, block = null;
    while (walker.nextNode()) {
      var node = walker.currentNode, value = node.nodeValue, here = blockOf(node);
      if (here !== block && !space && map.length) { text += " "; map.push(map[map.length - 1]); space = true; }
      block = here;  // block boundaries read as spaces, as they do in the chunk text
      for (var i = 0; i < value.length; i++) {
        var ch = value[i];
        if (/\s/.test(ch)) { if (space) continue; ch = " "; space = true; } else { space = false; }
        text += ch.toLowerCase(); map.push([node, i]);
      }
    }
    return { text: text, map: map };
  }
  // Chunk text keeps Markdown emphasis and code marks; the rendered page does not.
  // A quoted table row keeps its pipes; the rendered page shows cells.
  function norm(s) {
    return s.replace(/[`*]+/g, "").replace(/(^|\s)\|(?=\s|$)/g, " ").replace(/^\s*\||\|\s*$/g, " ")
      .replace(/[\s\u00a0]+/g, " ").trim().toLowerCase();
  }
  function mark(index, from, to) {
    var pieces = [], current = null;
    for (var k = from; k < to; k++) {
      var pos = index.map[k];
      if (!current || current.node !== pos[0]) { current = { node: pos[0], start: pos[1], end: pos[1] + 1 }; pieces.push(current); }
      else current.end = pos[1] + 1;
    }
    var first = null;
    pieces.reverse().forEach(function (p) {
      var end = Math.min(p.end, p.node.nodeValue.length);
      if (end <= p.start) return;
      var range = document.createRange(); range.setStart(p.node, p.start); range.setEnd(p.node, end);
      var m = document.createElement("mark"); m.className = "fragment"; range.surroundContents(m); first = m;
    });
    return first;
  }
  function highlight(root, start, end) {
    var index = textIndex(root), i = index.text.indexOf(start);
    if (i < 0) return null;
    var stop = i + start.length;
    if (end) { var j = index.text.indexOf(end, i); if (j < 0) return null; stop = j + end.length; }
    return mark(index, i, stop);
  }
  function fromFragment() {
    // Chromium hides the text directive from location.hash; the navigation entry still has the URL as followed.
    var nav = performance.getEntriesByType && performance.getEntriesByType("navigation")[0];
    var hash = location.hash.indexOf(":~:") < 0 && nav && nav.name.indexOf("#") >= 0 ? nav.name.slice(nav.name.indexOf("#")) : location.hash || "";
    var at = hash.indexOf(":~:text=");
    if (at < 0) return null;
    var parts = hash.slice(at + 8).split("&")[0].split(",").map(function (p) { return norm(decodeURIComponent(p)); });
    return { start: parts[0], end: parts.length > 1 ? parts[parts.length - 1] : "" };
  }
  function highlightQuote() {
    var doc = document.querySelector(".doc");
    if (!doc) return;
    var target = fromFragment(), saved = null;
    try { saved = JSON.parse(localStorage.getItem(PENDING) || "null"); localStorage.removeItem(PENDING); } catch (err) { saved = null; }
    if (!target && saved && saved.path === location.pathname && Date.now() - saved.at < 60000) target = { start: norm(saved.quote || ""), end: "" };
    if (!target || !target.start) return;
    var first = highlight(doc, target.start, target.end);
    if (!first) return;
    // Land on the section heading when the quote is still visible from there, else centre the quote.
    var heading = document.getElementById(decodeURIComponent((location.hash || "#").slice(1).split(":~:")[0]));
    if (heading) heading.scrollIntoView({ block: "start" });
    var box = first.getBoundingClientRect();
    if (!heading || box.top < 0 || box.bottom > window.innerHeight) first.scrollIntoView({ block: "center" });
  }
  function ready() { enhance(document); highlightQuote(); showLatest(); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
})();
