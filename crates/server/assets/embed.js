// The widget's embedding script (`/api/widget?format=js`): the server
// appends the call with this page's widget URL and title. It puts the
// widget's iframe after its own <script> tag, in the host page's colours
// (`data-theme` on the tag, else what the host page declares or paints:
// its `color-scheme`, then its background), and sizes the iframe to the
// height the widget reports (a page name that wraps makes it taller).
(function (cfg) {
  var s = document.currentScript, f = document.createElement("iframe");
  function theme() {
    var t = s.getAttribute("data-theme");
    if (t) return t;
    var c = getComputedStyle(document.documentElement).colorScheme || "";
    if (/dark/.test(c) && !/light/.test(c)) return "dark";
    if (/light/.test(c) && !/dark/.test(c)) return "light";
    var b = getComputedStyle(document.body || document.documentElement).backgroundColor.match(/\d+(\.\d+)?/g);
    if (b && (b.length < 4 || +b[3] > 0)) {
      var l = (.2126 * b[0] + .7152 * b[1] + .0722 * b[2]) / 255;
      return l < .4 ? "dark" : "light";
    }
    return "auto";
  }
  f.src = cfg.src + "&theme=" + theme();
  f.title = cfg.title;
  f.loading = "lazy";
  f.style.cssText = "border:0;width:100%;max-width:360px;height:48px;color-scheme:normal";
  addEventListener("message", function (e) {
    if (e.source === f.contentWindow && e.data && e.data.upstateWidget && e.data.height > 0)
      f.style.height = Math.ceil(e.data.height) + "px";
  });
  s.parentNode.insertBefore(f, s.nextSibling);
})
