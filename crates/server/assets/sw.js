// Upstate's service worker: shows the web push messages a status page
// sends (RFC 8030; the payload arrives decrypted by the browser) and opens
// the incident or maintenance page when one is clicked. Nothing is cached.
"use strict";
self.addEventListener("push", function (event) {
  var m = {};
  try { m = event.data ? event.data.json() : {}; } catch (e) { m = { title: event.data ? event.data.text() : "" }; }
  var title = m.title || "Status update";
  event.waitUntil(self.registration.showNotification(title, {
    body: m.body || "",
    tag: m.id || undefined,
    data: { url: m.url || "/" },
    icon: "/assets/favicon.svg"
  }));
});
self.addEventListener("notificationclick", function (event) {
  event.notification.close();
  var url = (event.notification.data && event.notification.data.url) || "/";
  event.waitUntil(self.clients.openWindow(url));
});
