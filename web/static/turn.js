// What a finished turn does wherever it is shown: the chat page loads this file before app.js, and /widget.js
// serves it in front of widget.js, so the page and the embedded panel send feedback, open and close citation
// cards, copy an answer and give up on a silent stream the same way.
var DocsChatTurn = (function () {
  "use strict";

  // Feedback on the turns under `root`: thumbs up is sent at once; thumbs down asks for an optional reason
  // first. `server` prefixes the API path ("" on the chat page); `credentials` is fetch's (the widget omits cookies).
  // A rating sent from this browser is remembered in it, so a thread opened again says so instead of asking again.
  var RATED = "docs-chat-rated:";
  function remembered(id) {
    try { return window.localStorage.getItem(RATED + id); } catch (e) { return null; }  // storage off: ask again
  }
  function remember(id, rating) {
    try { window.localStorage.setItem(RATED + id, rating); } catch (e) { /* storage off or full: nothing kept */ }
  }
  function shownAsSent(box, rating, text) {
    box.classList.add("sent"); box.querySelector(".feedback-status").textContent = text;
    box.querySelectorAll(".rate").forEach(function (b) {
      b.disabled = true; b.setAttribute("aria-pressed", String(b.getAttribute("data-rating") === rating));
    });
  }
  function markRated(within) {
    within.querySelectorAll(".feedback").forEach(function (box) {
      var holder = box.closest("[data-answer-id]"), rating = holder && remembered(holder.getAttribute("data-answer-id"));
      if (rating === "up" || rating === "down") shownAsSent(box, rating, "You rated this answer; thanks.");
    });
  }

  function feedback(root, server, credentials) {
    function send(box, rating, reason) {
      var id = box.closest("[data-answer-id]").getAttribute("data-answer-id"), status = box.querySelector(".feedback-status");
      return fetch(server + "/api/answers/" + encodeURIComponent(id) + "/feedback", {
        method: "POST", credentials: credentials, headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ rating: rating, reason: reason || "" })
      }).then(function (r) {
        if (!r.ok) throw new Error(String(r.status));
        remember(id, rating);
        shownAsSent(box, rating, "Thanks, your feedback was sent.");
      }).catch(function () { status.textContent = "Feedback could not be sent; please try again."; });
    }
    markRated(root.body || root);
    root.addEventListener("click", function (e) {
      var rate = e.target.closest && e.target.closest(".feedback .rate");
      if (!rate) return;
      var box = rate.closest(".feedback");
      box.querySelectorAll(".rate").forEach(function (b) { b.setAttribute("aria-pressed", String(b === rate)); });
      if (rate.getAttribute("data-rating") === "up") { send(box, "up", ""); return; }
      var form = box.querySelector(".feedback-reason");
      form.hidden = false; form.querySelector("input").focus();
    });
    root.addEventListener("submit", function (e) {
      var form = e.target.closest && e.target.closest(".feedback-reason");
      if (!form) return;
      e.preventDefault();
      send(form.closest(".feedback"), "down", form.querySelector("input").value).then(function () { form.hidden = true; });
    });
  }

  // Citation cards open on hover and focus (CSS). Touch screens have no hover: the first tap on a chip opens its
  // card; the card's ×, or a tap outside it, closes it; a source opened from a card (a new tab) leaves it closed, so
  // it does not cover the answer when the visitor comes back. True when the click was the card's to handle.
  function cardClick(e, root, coarse) {
    var close = e.target.closest && e.target.closest(".card-close");
    if (close) {
      var open = close.closest(".cite");
      open.classList.remove("open"); open.classList.add("closed");
      if (document.activeElement && open.contains(document.activeElement)) document.activeElement.blur();
      return true;
    }
    var inside = e.target.closest && e.target.closest(".cite");
    root.querySelectorAll(".cite.open").forEach(function (c) { if (c !== inside) c.classList.remove("open"); });
    var chip = e.target.closest && e.target.closest(".chip");
    if (coarse && chip && inside && !inside.classList.contains("open")) { e.preventDefault(); inside.classList.add("open"); return true; }
    var followed = e.target.closest && e.target.closest(".cite a[href]");
    if (followed) { inside.classList.remove("open"); inside.classList.add("closed"); }
    return false;
  }

  // One Tab stop per chip: the card's "Open source" and × are out of the Tab order (the chip itself opens the
  // source, Escape closes the card). ArrowDown on a chip moves into its card's actions, the arrows move between
  // them, and ArrowUp from the first or Escape goes back to the chip. True when the key was the card's to handle.
  function cardKeys(e) {
    var target = e.target;
    var cite = target.closest && target.closest(".cite");
    if (!cite) return false;
    var chip = cite.querySelector(".chip");
    var actions = [cite.querySelector(".card .open-source"), cite.querySelector(".card .card-close")].filter(Boolean);
    var at = actions.indexOf(target);
    if (target === chip) {
      if (e.key !== "ArrowDown" || !actions.length) return false;
      cite.classList.remove("closed"); actions[0].focus();
    } else if (at < 0) {
      return false;
    } else if (e.key === "ArrowDown" || e.key === "ArrowRight") {
      actions[(at + 1) % actions.length].focus();
    } else if (e.key === "ArrowUp" || e.key === "ArrowLeft") {
      (at === 0 ? chip : actions[at - 1]).focus();
    } else if (e.key === "Escape") {
      chip.focus(); cite.classList.add("closed");
    } else {
      return false;
    }
    e.preventDefault();
    return true;
  }

  // The copied Markdown's links to the docs viewer are paths ("/docs/…") where the turn's own links point at this
  // server: pasted elsewhere a path means nothing, so each takes the absolute address the turn's link resolves to.
  // `base` is what the turn's hrefs start with before the path ("" on the chat page, the server in the widget).
  function absoluteLinks(markdown, turn, base) {
    var known = {};
    if (turn) turn.querySelectorAll("a[href]").forEach(function (a) {
      var href = a.getAttribute("href");
      if (href.indexOf(base + "/") === 0) known[href.slice(base.length)] = a.href;
    });
    return markdown.replace(/\]\((\/(?!\/)[^)\s]*)\)/g, function (link, path) { return known[path] ? "](" + known[path] + ")" : link; });
  }

  // A stream that falls silent ends in a message with Retry instead of a spinner that never stops: `onStall` runs
  // once when nothing was heard for STALL_MS while `pending()` holds; the watch ends by itself once it no longer
  // does. Each event of the stream calls the returned `heard`.
  var STALL_MS = 30000;
  function watchdog(pending, onStall) {
    var last = Date.now(), timer = setInterval(function () {
      if (!pending()) clearInterval(timer);
      else if (Date.now() - last > STALL_MS) { clearInterval(timer); onStall(); }
    }, 1000);
    return function heard() { last = Date.now(); };
  }

  return { feedback: feedback, markRated: markRated, cardClick: cardClick, cardKeys: cardKeys, absoluteLinks: absoluteLinks, watchdog: watchdog };
})();
