// Small enhancements of the admin interface; every form works without them.
(function () {
  "use strict";
  // Password strength hint: length and variety, as the server's rules count.
  document.querySelectorAll("input[data-strength]").forEach(function (input) {
    var bar = document.getElementById(input.getAttribute("data-strength"));
    if (!bar) return;
    input.addEventListener("input", function () {
      var v = input.value, score = Math.min(v.length / 16, 1);
      var kinds = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter(function (r) { return r.test(v); }).length;
      score = v.length < 12 ? Math.min(score, 0.3) : Math.min(1, score * 0.7 + kinds * 0.1);
      bar.style.width = Math.round(score * 100) + "%";
      bar.style.background = score < 0.5 ? "var(--danger)" : score < 0.8 ? "var(--warn)" : "var(--ok)";
    });
  });
  // Destructive actions ask first.
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (e) {
      if (!window.confirm(form.getAttribute("data-confirm"))) e.preventDefault();
    });
  });
})();
