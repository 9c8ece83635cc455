// Upstate's live stream, served in front of the status page's script and
// the widget's (views/assets.rs): keeps a page's event stream open and marks
// the body `data-live="on"` while it is. A dropped stream reconnects by
// itself. An answer that is not a stream (a page made private, a busy or
// restarting server) closes it for good, and a request left unanswered (an
// instance hung behind the load balancer) would be waited on for ever: then
// try again after 2 s, twice as late each time, up to a minute apart.
function upstateLive(url, onStatus) {
  "use strict";
  function listen(wait) {
    var source = new EventSource(url);
    var stuck = null;
    function watch() {
      clearTimeout(stuck);
      stuck = setTimeout(function () {
        if (source.readyState !== EventSource.CONNECTING) return;
        source.close();
        again();
      }, 15000);
    }
    function again() {
      clearTimeout(stuck);
      document.body.removeAttribute("data-live");
      var next = Math.min(Math.max(wait * 2, 2000), 60000);
      setTimeout(function () { listen(next); }, next);
    }
    source.addEventListener("status", onStatus);
    source.onopen = function () {
      clearTimeout(stuck);
      wait = 0;
      document.body.setAttribute("data-live", "on");
    };
    source.onerror = function () {
      // Reconnecting by itself: watched as the first connection was.
      if (source.readyState === EventSource.CLOSED) again();
      else watch();
    };
    watch();
  }
  listen(0);
}
