// Small enhancements of the admin interface; every form works without them.
(function () {
  "use strict";
  // The menu is open beside the screen wherever there is room for it.
  var menu = document.querySelector("details.menu");
  if (menu && window.matchMedia && window.matchMedia("(min-width: 761px)").matches) menu.open = true;
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

// Recurring maintenance: only the part of the rule the chosen "Repeats"
// needs is shown, and the next windows are previewed as one types (POST
// /api/maintenance/recurring/preview, the same checks as saving), in the
// page's time zone. Without script every part shows and saving checks.
(function () {
  "use strict";
  var form = document.querySelector("form[data-recurring]");
  if (!form || !window.fetch) return;
  var tz = form.getAttribute("data-recurring");
  var box = document.getElementById("rec-preview");
  var list = box.querySelector("ol"), words = box.querySelector(".words");
  var chosen = function () {
    var r = form.querySelector("input[name=repeat]:checked");
    return r ? r.value : "rule";
  };
  var show = function () {
    form.querySelectorAll("[data-repeat]").forEach(function (part) {
      part.hidden = part.getAttribute("data-repeat") !== chosen();
    });
  };
  // In the zone the server read the times in (the rule's own, else the page's).
  var format = function (zone, at) {
    return new Intl.DateTimeFormat("en-GB", {
      timeZone: zone, weekday: "short", day: "numeric", month: "short", year: "numeric",
      hour: "2-digit", minute: "2-digit"
    }).format(at);
  };
  var clock = function (zone, at) {
    return new Intl.DateTimeFormat("en-GB", { timeZone: zone, hour: "2-digit", minute: "2-digit" }).format(at);
  };
  var value = function (name) {
    var f = form.querySelector("[name='" + name + "']");
    return f ? f.value.trim() : "";
  };
  var timer = null, sent = 0;
  var render = function () {
    var mine = ++sent, body = {
      statusPageId: Number(value("statusPageId:int")),
      repeat: chosen(),
      firstStart: value("firstStart"),
      durationMinutes: Number(value("durationMinutes:int")) || 0
    };
    if (body.repeat === "weekly") {
      body.weekdays = Array.prototype.map.call(form.querySelectorAll("input[name='weekdays[]']:checked"), function (c) { return c.value; });
    }
    if (body.repeat === "monthly" && value("monthDay:int")) body.monthDay = Number(value("monthDay:int"));
    if (body.repeat === "rule") body.rrule = value("rrule");
    if (value("timeZone:opt")) body.timeZone = value("timeZone:opt");
    if (!body.firstStart) { box.hidden = true; return; }
    fetch("/api/maintenance/recurring/preview", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": value("_csrf") },
      body: JSON.stringify(body)
    }).then(function (r) { return r.json(); }).then(function (j) {
      if (mine !== sent) return;
      list.textContent = "";
      box.hidden = false;
      if (!j.data) {
        var e = (j.errors && j.errors[0]) || {};
        var labels = { firstStart: "First window starts", durationMinutes: "Duration", weekdays: "Days of the week",
          monthDay: "Day of the month", rrule: "Rule", repeat: "Repeats", horizonDays: "Days ahead", timeZone: "Time zone" };
        words.textContent = "No preview yet: " + (labels[e.field] || e.field || "") + " " + (e.message || j.detail || "");
        return;
      }
      words.textContent = (j.data.inWords || j.data.rrule) + ", times in " + j.data.timeZone + ".";
      if (j.data.next.length === 0) words.textContent += " No window from now on.";
      j.data.next.forEach(function (o) {
        var li = document.createElement("li");
        var zone = j.data.timeZone || tz;
        li.textContent = format(zone, new Date(o.start)) + " – " + clock(zone, new Date(o.end));
        list.appendChild(li);
      });
    });
  };
  form.addEventListener("input", function () { show(); clearTimeout(timer); timer = setTimeout(render, 250); });
  form.addEventListener("change", function () { show(); clearTimeout(timer); timer = setTimeout(render, 250); });
  show();
  render();
})();

// A refused form: each link of the error summary leads to its field (found
// by name, the marked one first, as several forms may share a name) and
// says the field's own label; the summary takes focus unless the address
// already points somewhere.
(function () {
  "use strict";
  var summary = document.getElementById("error-summary");
  if (!summary) return;
  summary.querySelectorAll("a[data-field]").forEach(function (link) {
    var name = link.getAttribute("data-field").split("[")[0];
    var all = document.querySelectorAll("[name='" + name + "'], [name^='" + name + ":'], [name='" + name + "[]'], [name^='" + name + "[]:']");
    var field = Array.prototype.find.call(all, function (f) { return f.type !== "hidden" && f.closest(".invalid"); }) ||
      Array.prototype.find.call(all, function (f) { return f.type !== "hidden"; });
    if (!field) return;
    if (!field.id) field.id = "f-" + name + "-marked";
    link.href = "#" + field.id;
    var box = field.closest(".field");
    var label = box && (box.querySelector("legend") || box.querySelector("label[for='" + field.id + "']"));
    var words = label && label.firstChild && label.firstChild.textContent.trim();
    if (words) link.querySelector(".label").textContent = words;
    link.addEventListener("click", function (e) {
      e.preventDefault();
      field.scrollIntoView({ block: "center" });
      field.focus();
    });
  });
  if (!location.hash) summary.focus();
})();

// A new channel's form asks only for what its kind needs: "Where to send"
// says what it is for that kind, and the Telegram token shows for Telegram.
(function () {
  "use strict";
  var kind = document.getElementById("f-kind");
  var target = document.getElementById("f-target");
  if (!kind || !target) return;
  var label = document.querySelector("label[for='f-target']");
  var hint = document.getElementById("f-target-hint");
  var show = function () {
    var o = kind.options[kind.selectedIndex];
    if (label && o.getAttribute("data-target-label")) label.textContent = o.getAttribute("data-target-label");
    if (hint && o.getAttribute("data-target-hint")) hint.textContent = o.getAttribute("data-target-hint");
    target.type = kind.value === "email" ? "email" : "text";
    kind.form.querySelectorAll("[data-only-kind]").forEach(function (f) {
      f.hidden = f.getAttribute("data-only-kind") !== kind.value;
    });
  };
  kind.addEventListener("change", show);
  show();
})();

// Components offered for one page follow the page chosen above them: the
// others are hidden and unticked (without script all show, named by page).
(function () {
  "use strict";
  document.querySelectorAll("[data-follows-page]").forEach(function (set) {
    var page = document.getElementById(set.getAttribute("data-follows-page"));
    if (!page) return;
    var show = function () {
      var any = false;
      set.querySelectorAll("[data-page]").forEach(function (l) {
        var mine = l.getAttribute("data-page") === page.value;
        l.hidden = !mine;
        any = any || mine;
        if (!mine) l.querySelectorAll("input").forEach(function (i) { i.checked = false; });
        l.querySelectorAll(".muted").forEach(function (m) { m.hidden = true; });
      });
      set.hidden = !any;
    };
    page.addEventListener("change", show);
    show();
  });
})();

// Keyboard shortcuts (listed under the menu): "/" focuses the screen's
// search, "n" opens a new incident. Never while typing in a field.
(function () {
  "use strict";
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
    var t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    var target = document.querySelector("[data-shortcut='" + e.key + "']");
    if (!target) return;
    e.preventDefault();
    if (target.tagName === "A") window.location.href = target.href; else target.focus();
  });
})();

// What people will be told of an incident change, before it is posted:
// the headline, the components named, how many subscribers and which
// channels (POST /api/incidents/notice-preview, from the form as it is).
(function () {
  "use strict";
  document.querySelectorAll("[data-notice-preview]").forEach(function (box) {
    var form = box.closest("form"), csrf = form && form.querySelector("input[name=_csrf]");
    if (!csrf || !window.fetch) return;
    var mode = box.getAttribute("data-notice-preview");
    var timer = null, sent = 0;
    var read = function () {
      var body = { notify: !!form.querySelector("input[type=checkbox][name='notify:bool']:checked") };
      var incident = box.getAttribute("data-incident");
      if (incident) body.incidentId = Number(incident);
      if (mode === "resolve") body.resolve = true;
      var page = form.querySelector("[name='statusPageId:int']");
      if (page && !incident) body.statusPageId = Number(page.value);
      var title = form.querySelector("[name=title]");
      if (title) body.title = title.value;
      var status = form.querySelector("input[name=status]:checked");
      if (status) body.status = status.value;
      var ids = [], moves = [];
      form.querySelectorAll("input[name='componentIds[]:int']:checked").forEach(function (c) { ids.push(Number(c.value)); });
      form.querySelectorAll("select[name='componentStatuses[][status]:req']").forEach(function (s) {
        var id = s.closest("td").querySelector("input[name='componentStatuses[][componentId]:int']");
        if (s.value && id) moves.push({ componentId: Number(id.value), status: s.value });
      });
      form.querySelectorAll("input[type=hidden][name='componentStatuses[][status]:req']").forEach(function (h) {
        var id = h.previousElementSibling;
        if (id && id.name === "componentStatuses[][componentId]:int") moves.push({ componentId: Number(id.value), status: h.value });
      });
      body.componentIds = ids;
      body.componentStatuses = moves;
      return body;
    };
    var render = function () {
      var mine = ++sent;
      fetch("/api/incidents/notice-preview", {
        method: "POST", credentials: "same-origin",
        headers: { "content-type": "application/json", "x-csrf-token": csrf.value },
        body: JSON.stringify(read())
      }).then(function (r) { return r.ok ? r.json() : null; }).then(function (j) {
        if (!j || mine !== sent) return;
        var d = j.data;
        box.textContent = "";
        var head = document.createElement("div");
        head.className = "headline";
        head.textContent = "They will read: “" + d.headline + "”";
        box.appendChild(head);
        var who = document.createElement("div");
        var subs = d.notify ? (d.subscribers === 1 ? "1 subscriber" : d.subscribers + " subscribers") : "no subscriber (notify is off)";
        var chans = d.channels.length ? d.channels.join(", ") : "no team channel";
        who.className = "who-told";
        who.textContent = "Sent to " + subs + " and " + chans + ".";
        box.appendChild(who);
        if (d.components.length) {
          var ul = document.createElement("ul");
          d.components.forEach(function (c) {
            var li = document.createElement("li");
            li.textContent = c.name + ": " + c.status.replace(/_/g, " ");
            ul.appendChild(li);
          });
          box.appendChild(ul);
        }
        box.hidden = false;
      });
    };
    var later = function () { clearTimeout(timer); timer = setTimeout(render, 300); };
    form.addEventListener("input", later);
    form.addEventListener("change", later);
    render();
  });
})();
