// Upstate widget: keeps the one-line status current from the page's
// server-sent events (no reloads). The widget reads fine without it.
(function () {
  "use strict";
  var link = document.querySelector(".w");
  if (!link || !window.EventSource) return;
  var labels = JSON.parse(link.getAttribute("data-labels") || "{}");
  var symbols = JSON.parse(link.getAttribute("data-symbols") || "{}");
  var classes = JSON.parse(link.getAttribute("data-classes") || "{}");
  var source = new EventSource(link.getAttribute("data-events"));
  source.addEventListener("status", function (e) {
    var s;
    try { s = JSON.parse(e.data).status; } catch (err) { return; }
    if (!labels[s]) return;
    link.className = "w " + classes[s];
    link.setAttribute("data-status", s);
    link.querySelector(".dot").textContent = symbols[s];
    link.querySelector(".label").textContent = labels[s];
  });
})();
