// Upstate public status page: optional enhancements. The page works without
// this script; with it, relative times stay current, uptime bars take arrow
// keys (one tab stop per bar), and a server-sent event stream swaps in the
// fresh page the moment anything changes.
(function () {
  "use strict";
  var lang = document.documentElement.lang || "en";
  var rtf = window.Intl && Intl.RelativeTimeFormat ? new Intl.RelativeTimeFormat(lang, { numeric: "auto" }) : null;

  function ageTimes(root) {
    if (!rtf) return;
    var now = Date.now();
    root.querySelectorAll(".rel[data-at]").forEach(function (el) {
      var mins = Math.round((Date.parse(el.getAttribute("data-at")) - now) / 60000);
      var text = Math.abs(mins) < 60 ? rtf.format(mins, "minute")
        : Math.abs(mins) < 2880 ? rtf.format(Math.round(mins / 60), "hour")
        : rtf.format(Math.round(mins / 1440), "day");
      el.textContent = "(" + text + ")";
    });
  }

  // Roving tabindex: Tab reaches a bar once (at today), arrows move by day.
  function bars(root) {
    root.querySelectorAll(".bar").forEach(function (bar) {
      var cells = Array.prototype.slice.call(bar.querySelectorAll(".cell"));
      cells.forEach(function (c, i) { c.tabIndex = i === cells.length - 1 ? 0 : -1; });
      bar.addEventListener("keydown", function (e) {
        var i = cells.indexOf(document.activeElement);
        if (i < 0) return;
        var j = { ArrowLeft: i - 1, ArrowRight: i + 1, Home: 0, End: cells.length - 1 }[e.key];
        if (j === undefined || j < 0 || j >= cells.length) return;
        e.preventDefault();
        cells[i].tabIndex = -1;
        cells[j].tabIndex = 0;
        cells[j].focus();
      });
    });
  }

  function refresh() {
    return fetch(location.href, { cache: "no-store", credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("live"), live = document.getElementById("live");
        if (!fresh || !live) return;
        live.innerHTML = fresh.innerHTML;
        ageTimes(live);
        bars(live);
        document.title = doc.title;
        document.body.setAttribute("data-refreshed", String(Date.now()));
      })
      .catch(function () {});
  }

  function listen() {
    var url = document.body.getAttribute("data-events");
    if (!url || !window.EventSource || !document.getElementById("live")) return;
    var last = null;
    var source = new EventSource(url);
    source.addEventListener("status", function (e) {
      var version = null;
      try { version = JSON.parse(e.data).version; } catch (err) { return; }
      if (last !== null && version !== last) refresh();
      last = version;
    });
    source.onopen = function () { document.body.setAttribute("data-live", "on"); };
  }

  ageTimes(document);
  bars(document);
  setInterval(function () { ageTimes(document); }, 30000);
  listen();
})();
