// Small progressive enhancements; the chat, cards and docs viewer all work without this file.
(function () {
  "use strict";
  var PENDING = "docs-chat:highlight";

  // Cards open on hover and keyboard focus (CSS); Escape closes the focused one.
  document.addEventListener("keydown", function (e) {
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

  // Touch screens have no hover: the first tap on a chip opens its card, the card's link opens the source.
  var coarse = window.matchMedia && window.matchMedia("(pointer: coarse)").matches;
  document.addEventListener("click", function (e) {
    var chip = e.target.closest && e.target.closest(".chip");
    if (coarse && chip) {
      var cite = chip.closest(".cite");
      if (!cite.classList.contains("open")) {
        e.preventDefault();
        document.querySelectorAll(".cite.open").forEach(function (c) { c.classList.remove("open"); });
        cite.classList.add("open");
        return;
      }
    }
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

  // The composer clears after a successful ask (here, not in an hx-on attribute: the CSP allows no eval).
  document.addEventListener("htmx:afterRequest", function (e) {
    var form = e.detail && e.detail.elt;
    if (form && form.id === "ask" && e.detail.successful) form.reset();
  });

  // A new turn scrolls into view when it arrives.
  document.addEventListener("htmx:afterSwap", function (e) {
    if (e.detail && e.detail.target && e.detail.target.id === "thread") {
      var turns = e.detail.target.querySelectorAll(".turn");
      if (turns.length) turns[turns.length - 1].scrollIntoView({ block: "start", behavior: "smooth" });
    }
  });

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
  function norm(s) { return s.replace(/[`*]+/g, "").replace(/[\s\u00a0]+/g, " ").trim().toLowerCase(); }
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
    var hash = location.hash || "", at = hash.indexOf(":~:text=");
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
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", highlightQuote);
  else highlightQuote();
})();
