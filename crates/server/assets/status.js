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
        // Right to left the bar runs the other way: the arrow still moves
        // the way it points.
        var back = document.documentElement.dir === "rtl" ? 1 : -1;
        var j = { ArrowLeft: i + back, ArrowRight: i - back, Home: 0, End: cells.length - 1 }[e.key];
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
    var live = document.getElementById("live");
    if (!url || !window.EventSource || !live) return;
    // The version this page was rendered at: a change made before the
    // stream connected (or while it was away) is told by its next status
    // event, and shown then.
    var last = live.getAttribute("data-version");
    upstateLive(url, function (e) {
      var version = null;
      try { version = String(JSON.parse(e.data).version); } catch (err) { return; }
      if (last !== null && version !== last) refresh();
      last = version;
    });
  }

  ageTimes(document);
  bars(document);
  setInterval(function () { ageTimes(document); }, 30000);
  listen();
})();
// Browser notifications (web push): shown only where service workers and
// push exist. The subscription goes to /api/push/subscribe; the service
// worker (/sw.js) shows what arrives.
(function () {
  "use strict";
  var box = document.getElementById("push");
  if (!box || !("serviceWorker" in navigator) || !("PushManager" in window)) return;
  var on = document.getElementById("push-on"), off = document.getElementById("push-off");
  var state = document.getElementById("push-state");
  var page = Number(box.getAttribute("data-page"));
  box.hidden = false;
  function show(kind) {
    state.textContent = kind ? state.getAttribute("data-" + kind) : "";
    on.hidden = kind === "on";
    off.hidden = kind !== "on";
  }
  function key(b64) {
    var s = atob(b64.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((b64.length + 3) % 4));
    var out = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }
  function send(method, body) {
    return fetch("/api/push/subscribe", {
      method: method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body)
    }).then(function (r) { if (!r.ok) throw new Error(String(r.status)); });
  }
  var ready = navigator.serviceWorker.register("/sw.js", { scope: "/" }).then(function () {
    return navigator.serviceWorker.ready;
  });
  ready.then(function (reg) { return reg.pushManager.getSubscription(); }).then(function (sub) {
    if (!sub) return;
    return fetch("/api/push/subscribe?endpoint=" + encodeURIComponent(sub.endpoint))
      .then(function (r) { return r.json(); })
      .then(function (j) { if ((j.data.subscribedPageIds || []).indexOf(page) >= 0) show("on"); });
  }).catch(function () {});
  on.addEventListener("click", function () {
    Notification.requestPermission().then(function (p) {
      if (p !== "granted") { show("denied"); return; }
      return Promise.all([ready, fetch("/api/push/subscribe").then(function (r) { return r.json(); })])
        .then(function (got) {
          return got[0].pushManager.getSubscription().then(function (sub) {
            return sub || got[0].pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key(got[1].data.publicKey) });
          });
        })
        .then(function (sub) { return send("POST", { statusPageId: page, subscription: sub.toJSON() }); })
        .then(function () { show("on"); });
    }).catch(function () { show("failed"); });
  });
  off.addEventListener("click", function () {
    ready.then(function (reg) { return reg.pushManager.getSubscription(); }).then(function (sub) {
      if (sub) return send("DELETE", { endpoint: sub.endpoint, statusPageId: page });
    }).then(function () { show(""); }).catch(function () { show("failed"); });
  });
})();

// The subscribe form: one field takes an address or a URL; with a kind
// chosen, the field becomes the right type (the browser checks it) and its
// label says which.
(function () {
  "use strict";
  var form = document.querySelector("#subscribe form");
  var input = document.getElementById("sub-email");
  var label = document.getElementById("sub-label");
  if (!form || !input || !label) return;
  function follow() {
    var chosen = form.querySelector("input[name=kind]:checked");
    var email = chosen && chosen.value === "email";
    input.type = email ? "email" : "url";
    input.autocomplete = email ? "email" : "off";
    label.textContent = label.getAttribute(email ? "data-email" : "data-url");
  }
  form.querySelectorAll("input[name=kind]").forEach(function (r) { r.addEventListener("change", follow); });
  follow();
})();
