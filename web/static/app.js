// Small progressive enhancements; everything works without this file.
(function () {
  // Escape closes an open citation card (cards open on hover and keyboard focus via CSS).
  document.addEventListener("keydown", function (e) {
    if (e.key !== "Escape") return;
    var active = document.activeElement && document.activeElement.closest(".cite");
    if (active) { active.classList.add("closed"); }
  });
  document.addEventListener("focusin", function (e) {
    var cite = e.target.closest && e.target.closest(".cite");
    if (cite) cite.classList.remove("closed");
  });
  // Docs viewer: highlight the quote from a chip link when the browser lacks text fragments.
  function highlightFromFragment() {
    if (!document.querySelector(".doc")) return;
    var hash = decodeURIComponent(location.hash || "");
    var at = hash.indexOf(":~:text=");
    if (at < 0 || document.fragmentDirective) return;
    var parts = hash.slice(at + 8).split(",");
    var start = parts[0], end = parts.length > 1 ? parts[parts.length - 1] : "";
    var walker = document.createTreeWalker(document.querySelector(".doc"), NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      var node = walker.currentNode, i = node.nodeValue.indexOf(start);
      if (i < 0) continue;
      var j = end ? node.nodeValue.indexOf(end, i) : -1;
      var stop = j >= 0 ? j + end.length : i + start.length;
      var range = document.createRange(); range.setStart(node, i); range.setEnd(node, stop);
      var mark = document.createElement("mark"); mark.className = "fragment"; range.surroundContents(mark);
      mark.scrollIntoView({ block: "center" });
      return;
    }
  }
  document.addEventListener("DOMContentLoaded", highlightFromFragment);
})();
