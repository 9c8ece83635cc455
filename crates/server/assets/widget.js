// Upstate widget: keeps the one-line status current from the page's
// server-sent events (no reloads). The widget reads fine without it.
// It also tells the page that embeds it how tall it is, so the embedding
// script sizes the iframe (a page name that wraps needs two lines).
(function () {
  "use strict";
  function report() {
    if (window.parent === window) return;
    var height = Math.ceil(document.body.getBoundingClientRect().height);
    window.parent.postMessage({ upstateWidget: true, height: height }, "*");
  }
  report();
  window.addEventListener("load", report);
  if (window.ResizeObserver) new ResizeObserver(report).observe(document.body);
  else window.addEventListener("resize", report);
  var link = document.querySelector(".w");
  if (!link || !window.EventSource) return;
  var labels = JSON.parse(link.getAttribute("data-labels") || "{}");
  var symbols = JSON.parse(link.getAttribute("data-symbols") || "{}");
  var classes = JSON.parse(link.getAttribute("data-classes") || "{}");
  function show(e) {
    var s;
    try { s = JSON.parse(e.data).status; } catch (err) { return; }
    if (!labels[s]) return;
    link.className = "w " + classes[s];
    link.setAttribute("data-status", s);
    link.querySelector(".dot").textContent = symbols[s];
    link.querySelector(".label").textContent = labels[s];
  }
  upstateLive(link.getAttribute("data-events"), show);
})();
