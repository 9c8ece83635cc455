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
  // Copy buttons (hidden without script, where selecting the text works).
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source || !navigator.clipboard) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(source.textContent).then(function () { button.textContent = "Copied"; });
    });
  });
  // Destructive actions ask first.
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (e) {
      if (!window.confirm(form.getAttribute("data-confirm"))) e.preventDefault();
    });
  });
  // Drag and drop of components (the arrow buttons do the same without a
  // mouse): after a drop the whole layout goes to PUT /api/groups/reorder
  // through the page's hidden form.
  var layoutForm = document.getElementById("layout-form");
  if (layoutForm) {
    var dragged = null;
    document.querySelectorAll("li[data-component]").forEach(function (li) {
      li.setAttribute("draggable", "true");
      li.addEventListener("dragstart", function (e) {
        dragged = li;
        li.classList.add("dragging");
        e.dataTransfer.effectAllowed = "move";
        e.dataTransfer.setData("text/plain", li.getAttribute("data-component"));
      });
      li.addEventListener("dragend", function () { li.classList.remove("dragging"); });
    });
    document.querySelectorAll("ul[data-group]").forEach(function (ul) {
      ul.addEventListener("dragover", function (e) {
        if (!dragged) return;
        e.preventDefault();
        var after = Array.prototype.find.call(ul.querySelectorAll("li[data-component]:not(.dragging)"), function (li) {
          var box = li.getBoundingClientRect();
          return e.clientY < box.top + box.height / 2;
        });
        if (after) ul.insertBefore(dragged, after); else ul.appendChild(dragged);
      });
      ul.addEventListener("drop", function (e) {
        e.preventDefault();
        if (!dragged) return;
        dragged = null;
        var add = function (name, value) {
          var input = document.createElement("input");
          input.type = "hidden"; input.name = name; input.value = value;
          layoutForm.appendChild(input);
        };
        document.querySelectorAll("ul[data-group]").forEach(function (list) {
          var group = list.getAttribute("data-group");
          if (group) add("groupIds[]:int", group);
          list.querySelectorAll("li[data-component]").forEach(function (li) {
            add("components[][id]:int", li.getAttribute("data-component"));
            add("components[][groupId]:int", group);
          });
        });
        layoutForm.submit();
      });
    });
  }
  // Live preview of Markdown, rendered by the server exactly as the public
  // page will show it (POST /api/markdown/preview, the form's CSRF token).
  document.querySelectorAll("textarea[data-preview]").forEach(function (area) {
    var form = area.form, csrf = form && form.querySelector("input[name=_csrf]");
    if (!csrf || !window.fetch) return;
    var box = document.createElement("div");
    box.className = "preview";
    box.setAttribute("aria-live", "polite");
    box.innerHTML = "<div class=\"preview-label\">Preview</div><div class=\"preview-body\"></div>";
    var body = box.lastChild;
    area.closest(".field").appendChild(box);
    var timer = null, sent = 0;
    var render = function () {
      var mine = ++sent;
      fetch("/api/markdown/preview", {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/json", "x-csrf-token": csrf.value },
        body: JSON.stringify({ markdown: area.value, kind: area.getAttribute("data-preview") })
      }).then(function (r) { return r.ok ? r.json() : null; }).then(function (j) {
        // Only the latest answer is shown; the server has cleaned the HTML.
        if (j && mine === sent) {
          body.innerHTML = j.data.html;
          box.classList.toggle("empty", area.value.trim() === "");
        }
      });
    };
    area.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(render, 250);
    });
    render();
  });
})();

// A new page's slug follows its name as one types (lowercase letters,
// digits and hyphens), until the slug is edited by hand. Only the form that
// creates a page: renaming a page never moves its address.
(function () {
  "use strict";
  var form = document.querySelector('form[action="/api/statuspages"]');
  var name = form && form.querySelector("[name=name]");
  var slug = form && form.querySelector("[name=slug]");
  if (!name || !slug) return;
  var byHand = slug.value !== "";
  slug.addEventListener("input", function () { byHand = slug.value !== ""; });
  name.addEventListener("input", function () {
    if (byHand) return;
    slug.value = name.value.toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
      .replace(/[^a-z0-9]+/g, "-").replace(/^-+/, "").slice(0, 48).replace(/-+$/, "");
  });
})();
