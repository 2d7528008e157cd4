// What a finished turn does wherever it is shown: the chat page loads this file before app.js, and /widget.js
// serves it in front of widget.js, so the page and the embedded panel send feedback the same way.
var DocsChatTurn = (function () {
  "use strict";

  // Feedback on the turns under `root`: thumbs up is sent at once; thumbs down asks for an optional reason
  // first. `server` prefixes the API path ("" on the chat page); `credentials` is fetch's (the widget omits cookies).
  function feedback(root, server, credentials) {
    function send(box, rating, reason) {
      var id = box.closest("[data-answer-id]").getAttribute("data-answer-id"), status = box.querySelector(".feedback-status");
      return fetch(server + "/api/answers/" + encodeURIComponent(id) + "/feedback", {
        method: "POST", credentials: credentials, headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ rating: rating, reason: reason || "" })
      }).then(function (r) {
        if (!r.ok) throw new Error(String(r.status));
        box.classList.add("sent"); status.textContent = "Thanks, your feedback was sent.";
        box.querySelectorAll(".rate").forEach(function (b) { b.disabled = true; });
      }).catch(function () { status.textContent = "Feedback could not be sent; please try again."; });
    }
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

  return { feedback: feedback };
})();
