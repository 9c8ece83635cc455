//! The operator's second day (issue 26) in Chromium: forms that keep what
//! was typed and lead to what is wrong, and screens that say true things
//! about time. Screenshots land in `target/screenshots/admin/`.

use crate::admin_ui::{
    check, fill, no_axe_violations, press, shot, signed_in_browser, text, value,
};
use crate::browser::STEP_WITHIN;
use crate::browser::browser_available;
use crate::on_both_backends;
use crate::support::{Backend, at_offset_ms};
use serde_json::json;
use std::time::Duration;

on_both_backends!(
    a_recurring_rule_is_previewed_and_picked_through_the_api,
    a_quiet_incident_tells_channels_and_no_subscriber,
    each_recipient_reads_its_own_language
);
on_both_backends!(browser: recurring_windows_are_picked_as_a_person_thinks_in_chromium, a_refused_form_leads_to_its_first_marked_field_in_chromium, screens_tell_planned_from_under_way_and_lapsed_in_chromium, switched_off_features_offer_no_snippet_in_chromium, a_subscriber_added_by_hand_follows_chosen_components_in_chromium, incidents_are_found_filtered_and_paged_in_chromium, the_audit_log_filters_by_kind_and_links_targets_in_chromium, the_incident_form_previews_who_is_told_in_chromium, monitors_at_a_glance_searched_and_paused_in_chromium, a_channel_language_is_set_in_chromium, component_descriptions_are_markdown_in_chromium);

/// The recurring rule from the browser: picked as "every week on Monday and
/// Sunday" with the next windows previewed in the page's time zone; a rule
/// the server cannot read refused in words beside it, everything typed kept
/// in its own form (the one-off form left alone); nothing stored until right.
async fn recurring_windows_are_picked_as_a_person_thinks_in_chromium(b: Backend) {
    if !browser_available("recurring_windows_are_picked_as_a_person_thinks_in_chromium") {
        return;
    }
    let (s, d) = signed_in_browser(b, "ad@example.com", "admin").await;
    let page = s.page("acme").await;
    s.patch(
        &format!("/api/v1/statuspages/{page}"),
        json!({"timeZone": "Europe/Berlin"}),
    )
    .await
    .data(200);
    s.component(page, "Database").await;
    press(&d, "Maintenance").await;
    // Weekly is the first guess, on Sunday: the raw rule is out of sight.
    assert!(
        d.js("return document.getElementById('rec-rrule').closest('[data-repeat]').hidden")
            .await
            .as_bool()
            .unwrap(),
        "the RRULE field shows only for 'By an RFC 5545 rule'"
    );
    // Two forms here have a Title: this one's is `rec-title`.
    crate::admin_ui::field_by_id(&d, "rec-title")
        .await
        .send_keys("Patch night")
        .await
        .unwrap();
    check(&d, "Monday").await;
    d.js("var f = document.getElementById('rec-first'); f.value = '2030-01-06T02:00'; f.dispatchEvent(new Event('input', {bubbles: true}));").await;
    let shown = d
        .until(
            "return document.querySelectorAll('#rec-preview li').length === 5",
            STEP_WITHIN,
        )
        .await;
    assert!(shown.is_some(), "five next windows are previewed");
    let preview = text(&d, "#rec-preview").await;
    assert!(
        preview.contains("Every Monday and Sunday")
            && preview.contains("Europe/Berlin")
            && preview.contains("Sun, 6 Jan 2030, 02:00 – 03:00")
            && preview.contains("Mon, 7 Jan 2030, 02:00"),
        "{preview}"
    );
    // Kept in Chicago's wall-clock time instead: the preview reads the
    // same 02:00, now in that zone.
    fill(&d, "Time zone", "America/Chicago").await;
    let moved = d
        .until(
            "return document.querySelector('#rec-preview .words').textContent.includes('America/Chicago')",
            STEP_WITHIN,
        )
        .await;
    assert!(moved.is_some(), "the preview follows the zone");
    let preview = text(&d, "#rec-preview").await;
    assert!(
        preview.contains("Sun, 6 Jan 2030, 02:00 – 03:00"),
        "{preview}"
    );
    d.js("document.getElementById('rec-zone').scrollIntoView()")
        .await;
    d.screenshot(&shot(b, "maintenance-recurring-preview"))
        .await;
    no_axe_violations(&d, "maintenance, recurring preview").await;

    // A rule the parser cannot read, typed in the advanced field.
    check(&d, "By an RFC 5545 rule").await;
    fill(&d, "Rule", "FREQ=WEEKLY;BYDAY=WEEKLY").await;
    d.js("document.querySelector('[id^=rec-c-]').click()").await;
    press(&d, "Add recurring maintenance").await;
    let error = text(&d, "#rec-rrule-error").await;
    assert!(
        error.contains("FREQ=WEEKLY;BYDAY=SU") && !error.contains("parsing"),
        "the error says what to write, not the parser's words: {error}"
    );
    assert_eq!(value(&d, "Rule").await, "FREQ=WEEKLY;BYDAY=WEEKLY");
    let kept = d
        .js("return [document.getElementById('rec-title').value, document.getElementById('f-title').value, \
             document.querySelector('[id^=rec-c-]').checked, document.querySelector('input[name=repeat]:checked').value, \
             document.activeElement.id]")
        .await;
    assert_eq!(
        kept,
        json!(["Patch night", "", true, "rule", "error-summary"]),
        "typed kept in the recurring form only, components ticked, the summary focused"
    );
    d.screenshot(&shot(b, "maintenance-recurring-refused"))
        .await;
    no_axe_violations(&d, "maintenance, refused rule").await;
    // Monthly with no day: the day is asked for beside its own field.
    check(&d, "Every month, on the day below").await;
    press(&d, "Add recurring maintenance").await;
    assert!(
        text(&d, "#rec-monthday-error")
            .await
            .contains("choose the day of the month")
    );
    assert_eq!(
        s.get("/api/maintenance/recurring").await.data(200)["templates"],
        json!([]),
        "nothing stored while refused"
    );
    check(&d, "Every week, on the days below").await;
    press(&d, "Add recurring maintenance").await;
    assert!(
        text(&d, "[role=status]")
            .await
            .contains("Recurring maintenance added")
    );
    let listed = text(&d, "#h-recurring + p + ul").await;
    assert!(
        listed.contains("Patch night") && listed.contains("Every Monday and Sunday at 02:00"),
        "{listed}"
    );
    let stored = s.get("/api/maintenance/recurring").await.data(200);
    assert_eq!(
        stored["templates"][0]["rrule"], "FREQ=WEEKLY;BYDAY=MO,SU",
        "{stored}"
    );
    assert_eq!(
        stored["templates"][0]["timeZone"], "America/Chicago",
        "the zone typed survived the refusals: {stored}"
    );
    assert!(listed.contains("(America/Chicago)"), "{listed}");
    d.quit().await;
}

/// `POST /api/maintenance/recurring/preview`: the next five windows of a
/// pick, in order, without storing anything; a pick missing its days or a
/// rule the parser cannot read is refused naming the field.
async fn a_recurring_rule_is_previewed_and_picked_through_the_api(b: Backend) {
    let s = crate::support::Server::start(b).await;
    let page = s.page("acme").await;
    let body = |extra: serde_json::Value| {
        let mut v =
            json!({"statusPageId": page, "firstStart": "2030-01-01T02:00", "durationMinutes": 90});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    let p = s
        .post(
            "/api/maintenance/recurring/preview",
            body(json!({"repeat": "monthly", "monthDay": 31})),
        )
        .await
        .data(200);
    assert_eq!(p["rrule"], "FREQ=MONTHLY;BYMONTHDAY=31");
    assert_eq!(p["inWords"], "Every month on day 31");
    let starts: Vec<&str> = p["next"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["start"].as_str().unwrap())
        .collect();
    assert_eq!(
        starts,
        [
            "2030-01-31T02:00:00.000Z",
            "2030-03-31T02:00:00.000Z",
            "2030-05-31T02:00:00.000Z",
            "2030-07-31T02:00:00.000Z",
            "2030-08-31T02:00:00.000Z"
        ],
        "months without a 31st are skipped"
    );
    assert_eq!(p["next"][0]["end"], "2030-01-31T03:30:00.000Z");
    s.post(
        "/api/maintenance/recurring/preview",
        body(json!({"repeat": "weekly"})),
    )
    .await
    .invalid_fields(&["weekdays"]);
    s.post(
        "/api/maintenance/recurring/preview",
        body(json!({"repeat": "rule", "rrule": "FREQ=WEEKLY;BYDAY=WEEKLY"})),
    )
    .await
    .invalid_fields(&["rrule"]);
    s.post(
        "/api/maintenance/recurring/preview",
        body(json!({"repeat": "hourly"})),
    )
    .await
    .invalid_fields(&["repeat"]);
    let made = s
        .post(
            "/api/maintenance/recurring",
            body(
                json!({"title": "Patch night", "repeat": "weekly", "weekdays": ["SU", "MO", "SU"]}),
            ),
        )
        .await
        .data(201);
    assert_eq!(made["rrule"], "FREQ=WEEKLY;BYDAY=MO,SU");
    let all = s.get("/api/maintenance/recurring").await.data(200);
    assert_eq!(
        all["templates"].as_array().unwrap().len(),
        1,
        "previews stored nothing"
    );
}

/// A refused form far down a screen: the summary at the top takes focus,
/// names the field by its label and leads to it.
async fn a_refused_form_leads_to_its_first_marked_field_in_chromium(b: Backend) {
    if !browser_available("a_refused_form_leads_to_its_first_marked_field_in_chromium") {
        return;
    }
    let (s, d) = signed_in_browser(b, "ad@example.com", "admin").await;
    let page = s.page("acme").await;
    d.c()
        .goto(&format!("{}/admin/pages/{page}", s.base))
        .await
        .unwrap();
    fill(&d, "Slug", "Not A Slug!").await;
    press(&d, "Save settings").await;
    assert_eq!(
        d.js("return document.activeElement.id").await,
        "error-summary",
        "the summary has focus"
    );
    let summary = text(&d, "#error-summary").await;
    assert!(summary.contains("Slug"), "{summary}");
    d.screenshot(&shot(b, "error-summary")).await;
    no_axe_violations(&d, "page settings, refused").await;
    d.js("document.querySelector('#error-summary a').click()")
        .await;
    let focused = d
        .js("var a = document.activeElement; return [a.name, a.getAttribute('aria-invalid')]")
        .await;
    assert_eq!(
        focused,
        json!(["slug", "true"]),
        "the link leads to the field"
    );
    assert_eq!(
        value(&d, "Slug").await,
        "Not A Slug!",
        "what was typed stays"
    );
    assert_eq!(
        s.get(&format!("/api/v1/statuspages/{page}"))
            .await
            .data(200)["slug"],
        "acme"
    );
    d.quit().await;
}

/// Time on the screens: tomorrow's window is planned, not "affecting it
/// now"; once started it is; a window whose end passed without anyone
/// starting it leaves the public upcoming list (at that moment, without a
/// write) and is flagged on the dashboard.
async fn screens_tell_planned_from_under_way_and_lapsed_in_chromium(b: Backend) {
    if !browser_available("screens_tell_planned_from_under_way_and_lapsed_in_chromium") {
        return;
    }
    let (s, d) = signed_in_browser(b, "ad@example.com", "admin").await;
    let page = s.page("acme").await;
    let c = s.component(page, "Database").await;
    let window = |title: &str, from: i64, to: i64| {
        json!({"title": title, "statusPageId": page, "componentIds": [c],
               "scheduledStartTime": at_offset_ms(from), "scheduledEndTime": at_offset_ms(to)})
    };
    let hour = 3_600_000;
    let tomorrow = s
        .post(
            "/api/v1/maintenance",
            window("Disk swap", 24 * hour, 25 * hour),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    s.post("/api/v1/maintenance", window("Short check", hour, 2 * hour))
        .await
        .data(201);
    d.c()
        .goto(&format!("{}/admin/components/{c}", s.base))
        .await
        .unwrap();
    assert_eq!(text(&d, "#h-now + p").await, "Nothing.");
    let planned = text(&d, "#h-planned + ul").await;
    assert!(
        planned.contains("Disk swap") && planned.contains("Short check"),
        "{planned}"
    );
    no_axe_violations(&d, "component with planned maintenance").await;
    s.post_empty(&format!("/api/maintenance/{tomorrow}/start"))
        .await
        .data(200);
    d.c().refresh().await.unwrap();
    let now = text(&d, "#h-now + ul").await;
    assert!(
        now.contains("Disk swap") && now.contains("under way"),
        "{now}"
    );
    d.screenshot(&shot(b, "component-maintenance")).await;

    // "Short check" ends in two hours; nobody starts it.
    let upcoming = |v: serde_json::Value| -> Vec<String> {
        v["maintenance"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|m| m["title"].as_str().unwrap().to_string())
            .collect()
    };
    let before = s.get("/api/public/status/acme/maintenance").await;
    assert_eq!(before.status, 200);
    assert_eq!(upcoming(before.body.clone()), ["Short check", "Disk swap"]);
    s.advance(Duration::from_secs(3 * 3600));
    let after = s.get("/api/public/status/acme/maintenance").await;
    assert_eq!(
        upcoming(after.body.clone()),
        ["Disk swap"],
        "a window whose end passed unstarted is not upcoming"
    );
    let html = reqwest::get(format!("{}/s/acme", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        html.contains("Not started"),
        "the page lists it among what happened, as not started"
    );
    // Three idle hours ended the session.
    crate::admin_ui::sign_in(&d, &s, "ad@example.com").await;
    let flag = text(&d, "#overdue").await;
    assert!(
        flag.contains("1 maintenance window has passed its planned end"),
        "{flag}"
    );
    let pill = text(&d, "#h-maintenance + ul").await;
    assert!(pill.contains("ended, never started"), "{pill}");
    no_axe_violations(&d, "dashboard with a lapsed window").await;
    d.screenshot(&shot(b, "dashboard-lapsed")).await;
    d.quit().await;
}

/// A feature turned off in Settings is not offered in "Share and embed"
/// (its address answers 404), and the screen says why it is missing.
async fn switched_off_features_offer_no_snippet_in_chromium(b: Backend) {
    if !browser_available("switched_off_features_offer_no_snippet_in_chromium") {
        return;
    }
    let (s, d) = signed_in_browser(b, "ad@example.com", "admin").await;
    let page = s.page("acme").await;
    let offered = async || -> Vec<String> {
        d.c()
            .goto(&format!("{}/admin/pages/{page}", s.base))
            .await
            .unwrap();
        let terms = d
            .js("return [...document.querySelectorAll('dl.share dt')].map(t => t.textContent)")
            .await;
        terms
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect()
    };
    let all = offered().await;
    assert!(all.contains(&"Widget".to_string()) && all.contains(&"RSS feed".to_string()));
    let widget = format!("{}/api/widget?page=acme&format=js", s.base);
    assert_eq!(reqwest::get(&widget).await.unwrap().status(), 200);
    let r = s
        .send(
            reqwest::Method::PUT,
            "/api/features",
            Some(&s.key),
            Some(json!({"widget": false, "feeds": false})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let left = offered().await;
    assert!(
        !left.contains(&"Widget".to_string()) && !left.contains(&"RSS feed".to_string()),
        "{left:?}"
    );
    assert!(left.contains(&"Badge".to_string()) && left.contains(&"Calendar".to_string()));
    let why = text(&d, "#h-share ~ p").await;
    assert!(why.contains("feeds, widget"), "{why}");
    assert_eq!(reqwest::get(&widget).await.unwrap().status(), 404);
    no_axe_violations(&d, "page with features off").await;
    d.quit().await;
}

/// Adding a subscriber by hand scopes it to components as the CSV import
/// can: only the chosen page's components are offered, and the ticked ones
/// are what it follows.
async fn a_subscriber_added_by_hand_follows_chosen_components_in_chromium(b: Backend) {
    if !browser_available("a_subscriber_added_by_hand_follows_chosen_components_in_chromium") {
        return;
    }
    let (s, d) = signed_in_browser(b, "ad@example.com", "admin").await;
    let acme = s.page("acme").await;
    s.component(acme, "API").await;
    let db = s.component(acme, "Database").await;
    let beta = s.page("beta").await;
    s.component(beta, "Web").await;
    d.c()
        .goto(&format!("{}/admin/subscribers", s.base))
        .await
        .unwrap();
    let page_select = crate::admin_ui::field_by_id(&d, "f-statusPageId").await;
    page_select
        .select_by_value(&acme.to_string())
        .await
        .unwrap();
    let visible = "return [...document.querySelectorAll('[data-page]')].filter(l => !l.hidden).map(l => l.innerText.trim())";
    assert_eq!(d.js(visible).await, json!(["API", "Database"]));
    check(&d, "Database").await;
    crate::admin_ui::field_by_id(&d, "f-kind")
        .await
        .select_by_value("webhook")
        .await
        .unwrap();
    fill(&d, "Address or URL", "https://hooks.example.com/db").await;
    no_axe_violations(&d, "subscribers, scoped add").await;
    d.screenshot(&shot(b, "subscriber-add-scoped")).await;
    press(&d, "Add subscriber").await;
    assert!(text(&d, "[role=status]").await.contains("Subscriber added"));
    let all = s.get("/api/subscribers").await.data(200);
    let added = all
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["target"] == "https://hooks.example.com/db")
        .unwrap_or_else(|| panic!("{all}"))
        .clone();
    assert_eq!(added["componentIds"], json!([db]), "{added}");
    // Another page: its own components only, nothing of the first ticked.
    crate::admin_ui::field_by_id(&d, "f-statusPageId")
        .await
        .select_by_value(&beta.to_string())
        .await
        .unwrap();
    assert_eq!(d.js(visible).await, json!(["Web"]));
    assert_eq!(
        d.js("return document.querySelectorAll('[data-page] input:checked').length")
            .await,
        0
    );
    d.quit().await;
}

/// The incident list beyond the newest 50: a title search, filters by page,
/// status and impact, pages of 25; "/" focuses the search and "n" opens a
/// new incident with its title focused.
async fn incidents_are_found_filtered_and_paged_in_chromium(b: Backend) {
    if !browser_available("incidents_are_found_filtered_and_paged_in_chromium") {
        return;
    }
    let (s, d) = signed_in_browser(b, "ad@example.com", "admin").await;
    let acme = s.page("acme").await;
    let beta = s.page("beta").await;
    for n in 0..28 {
        s.incident(acme, &format!("Routine blip {n:02}")).await;
    }
    let db = s.incident(acme, "Database 100% full (disk_1)").await["id"]
        .as_i64()
        .unwrap();
    s.post(
        &format!("/api/v1/incidents/{db}/resolve"),
        json!({"message": "Space freed."}),
    )
    .await
    .data(200);
    s.post(
        "/api/v1/incidents",
        json!({"title": "Checkout down", "statusPageId": beta, "impact": "critical", "message": "Looking"}),
    )
    .await
    .data(201);
    d.c()
        .goto(&format!("{}/admin/incidents", s.base))
        .await
        .unwrap();
    let titles = "return [...document.querySelectorAll('#h-found ~ ul.rows li strong')].map(e => e.textContent)";
    let first = d.js(titles).await;
    assert_eq!(first.as_array().unwrap().len(), 25, "{first}");
    assert_eq!(first[0], "Checkout down", "newest first");
    press(&d, "Older →").await;
    let second = d.js(titles).await;
    assert_eq!(second.as_array().unwrap().len(), 5, "{second}");
    assert_eq!(second[4], "Routine blip 00");
    assert!(text(&d, "nav.paging").await.contains("Page 2"));
    no_axe_violations(&d, "incidents, page 2").await;

    // "/" from anywhere on the screen lands in the search.
    d.c()
        .goto(&format!("{}/admin/incidents", s.base))
        .await
        .unwrap();
    d.c()
        .active_element()
        .await
        .unwrap()
        .send_keys("/")
        .await
        .unwrap();
    assert_eq!(d.js("return document.activeElement.id").await, "f-q");
    d.c()
        .active_element()
        .await
        .unwrap()
        .send_keys("100% FULL")
        .await
        .unwrap();
    crate::admin_ui::field_by_id(&d, "f-status")
        .await
        .select_by_value("resolved")
        .await
        .unwrap();
    press(&d, "Search").await;
    assert_eq!(d.js(titles).await, json!(["Database 100% full (disk_1)"]));
    assert!(crate::admin_ui::path(&d).await.contains("q=100%25+FULL"));
    d.screenshot(&shot(b, "incidents-search")).await;
    // Text taken literally: "_" and "%" are no wildcards.
    d.c()
        .goto(&format!("{}/admin/incidents?q=disk_", s.base))
        .await
        .unwrap();
    assert_eq!(d.js(titles).await, json!(["Database 100% full (disk_1)"]));
    d.c()
        .goto(&format!("{}/admin/incidents?q=k_1x", s.base))
        .await
        .unwrap();
    assert_eq!(text(&d, "#h-found ~ p.empty").await, "No incident matches.");
    d.c()
        .goto(&format!(
            "{}/admin/incidents?page={beta}&impact=critical&status=unresolved",
            s.base
        ))
        .await
        .unwrap();
    assert_eq!(d.js(titles).await, json!(["Checkout down"]));
    // Nonsense in the address filters nothing and breaks nothing.
    d.c()
        .goto(&format!(
            "{}/admin/incidents?page=x&impact=huge&p=-3",
            s.base
        ))
        .await
        .unwrap();
    assert_eq!(d.js(titles).await.as_array().unwrap().len(), 25);

    // "n" opens a new incident, typing starts in its title.
    d.c()
        .active_element()
        .await
        .unwrap()
        .send_keys("n")
        .await
        .unwrap();
    d.until(
        "return location.pathname === '/admin/incidents/new' && document.readyState === 'complete'",
        STEP_WITHIN,
    )
    .await;
    assert_eq!(d.js("return document.activeElement.name").await, "title");
    d.quit().await;
}

/// The audit log narrowed to every action of a kind ("incident" finds
/// incident.*), its targets links to their screens; the API takes the same
/// prefix and refuses one that names nothing.
async fn the_audit_log_filters_by_kind_and_links_targets_in_chromium(b: Backend) {
    if !browser_available("the_audit_log_filters_by_kind_and_links_targets_in_chromium") {
        return;
    }
    let (s, d) = signed_in_browser(b, "ad@example.com", "admin").await;
    let page = s.page("acme").await;
    let id = s.incident(page, "Slow").await["id"].as_i64().unwrap();
    s.post(
        &format!("/api/v1/incidents/{id}/resolve"),
        json!({"message": "Fine."}),
    )
    .await
    .data(200);
    d.c()
        .goto(&format!("{}/admin/audit", s.base))
        .await
        .unwrap();
    fill(&d, "Action", "incident").await;
    press(&d, "Filter").await;
    let actions = d
        .js("return [...document.querySelectorAll('table.events td code')].map(c => c.textContent)")
        .await;
    assert_eq!(actions, json!(["incident.resolve", "incident.create"]));
    let link = d
        .js("return document.querySelector('table.events td a').getAttribute('href')")
        .await;
    assert_eq!(link, format!("/admin/incidents/{id}"));
    no_axe_violations(&d, "audit, by kind").await;
    d.screenshot(&shot(b, "audit-prefix")).await;
    let r = s.get("/api/audit-events?action=incident").await.data(200);
    let listed: Vec<&str> = r
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["incident.resolve", "incident.create"]);
    s.get("/api/audit-events?action=incid")
        .await
        .invalid_fields(&["action"]);
    d.quit().await;
}

/// The team's channel and a webhook subscriber of a page, on `rx`.
async fn channel_and_subscriber(
    s: &crate::support::Server,
    rx: &crate::receiver::Receiver,
    page: i64,
) {
    s.post(
        "/api/notifications",
        json!({"name": "Team hook", "kind": "webhook", "target": format!("{}/team", rx.base)}),
    )
    .await
    .data(201);
    s.post(
        "/api/subscribers",
        json!({"statusPageId": page, "kind": "webhook", "target": format!("{}/sub", rx.base)}),
    )
    .await
    .data(201);
}

fn paths(rx: &crate::receiver::Receiver) -> Vec<String> {
    let mut p: Vec<String> = rx.got().iter().map(|g| g.path.clone()).collect();
    p.sort();
    p
}

/// "Notify subscribers" off: the team's channel hears of the incident, the
/// page's subscriber does not; the next update (on by default) reaches
/// both. The preview counts the same people before anything is posted.
async fn a_quiet_incident_tells_channels_and_no_subscriber(b: Backend) {
    let rx = crate::receiver::Receiver::start().await;
    let s = crate::support::Server::start_with(b, &[("UPSTATE_OUTGOING_ALLOW", "127.0.0.1")]).await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    channel_and_subscriber(&s, &rx, page).await;
    let ask = |extra: serde_json::Value| {
        let mut v = json!({"statusPageId": page, "title": "API errors", "componentIds": [api]});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    let p = s
        .post("/api/incidents/notice-preview", ask(json!({})))
        .await
        .data(200);
    assert_eq!(
        p,
        json!({"headline": "New incident: API errors", "language": "en",
               "components": [{"id": api, "name": "API", "status": "operational"}],
               "subscribers": 1, "channels": ["Team hook"], "notify": true})
    );
    let p = s
        .post(
            "/api/incidents/notice-preview",
            ask(json!({"notify": false})),
        )
        .await
        .data(200);
    assert_eq!(p["subscribers"], 0);
    assert_eq!(p["channels"], json!(["Team hook"]));
    s.post("/api/incidents/notice-preview", json!({"title": "x"}))
        .await
        .invalid_fields(&["statusPageId"]);
    // Both is a guess the server does not make (the document's oneOf).
    s.post(
        "/api/incidents/notice-preview",
        json!({"incidentId": 1, "statusPageId": page}),
    )
    .await
    .invalid_fields(&["statusPageId"]);
    assert_eq!(
        s.post(
            "/api/incidents/notice-preview",
            json!({"incidentId": 999999})
        )
        .await
        .status,
        404
    );
    s.post(
        "/api/incidents/notice-preview",
        json!({"statusPageId": page, "shout": true}),
    )
    .await
    .invalid_fields(&["shout"]);

    let inc = s
        .post(
            "/api/v1/incidents",
            json!({"title": "API errors", "statusPageId": page, "message": "Looking", "componentIds": [api], "notify": false}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    rx.wait_for(1, crate::browser::STEP_WITHIN).await;
    s.quiet().await;
    assert_eq!(paths(&rx), ["/team"], "the subscriber heard nothing");
    let p = s
        .post(
            "/api/incidents/notice-preview",
            json!({"incidentId": inc, "status": "identified"}),
        )
        .await
        .data(200);
    assert_eq!(p["headline"], "Identified: API errors");
    s.post(
        &format!("/api/v1/incidents/{inc}/updates"),
        json!({"message": "Found it", "status": "identified"}),
    )
    .await
    .data(201);
    rx.wait_for(3, crate::browser::STEP_WITHIN).await;
    s.quiet().await;
    assert_eq!(paths(&rx), ["/sub", "/team", "/team"]);
}

/// The new-incident form: "Notify subscribers" on by default, and the
/// preview says what people will read and who, following the form; turned
/// off, the incident reaches the team's channel only.
async fn the_incident_form_previews_who_is_told_in_chromium(b: Backend) {
    if !browser_available("the_incident_form_previews_who_is_told_in_chromium") {
        return;
    }
    let rx = crate::receiver::Receiver::start().await;
    let (s, d) = crate::admin_ui::signed_in_browser_with(
        b,
        "ad@example.com",
        "admin",
        &[("UPSTATE_OUTGOING_ALLOW", "127.0.0.1")],
    )
    .await;
    let page = s.page("acme").await;
    s.component(page, "API").await;
    channel_and_subscriber(&s, &rx, page).await;
    d.c()
        .goto(&format!("{}/admin/incidents/new", s.base))
        .await
        .unwrap();
    fill(&d, "Title", "Checkout errors").await;
    let said = "var b = document.querySelector('[data-notice-preview]'); return b.hidden ? '' : b.innerText";
    let wait_for = async |words: &str| {
        let js = format!(
            "var b = document.querySelector('[data-notice-preview]'); return !b.hidden && b.innerText.indexOf('{words}') >= 0"
        );
        let seen = d.until(&js, STEP_WITHIN).await;
        assert!(
            seen.is_some(),
            "preview never said {words:?}: {}",
            d.js(said).await
        );
    };
    wait_for("New incident: Checkout errors").await;
    wait_for("Sent to 1 subscriber and Team hook.").await;
    crate::admin_ui::field(&d, "Status of API")
        .await
        .select_by_value("major_outage")
        .await
        .unwrap();
    wait_for("API: major outage").await;
    no_axe_violations(&d, "new incident with its notice preview").await;
    d.js("document.querySelector('[data-notice-preview]').scrollIntoView({block: 'center'})")
        .await;
    d.screenshot(&shot(b, "incident-notice-preview")).await;
    check(&d, "Notify subscribers").await;
    wait_for("no subscriber (notify is off)").await;
    fill(&d, "Message", "We are looking.").await;
    press(&d, "Report incident").await;
    rx.wait_for(1, crate::browser::STEP_WITHIN).await;
    s.quiet().await;
    assert_eq!(paths(&rx), ["/team"]);
    d.quit().await;
}

/// Monitors at a glance on the dashboard (up, failing, paused; the failing
/// with their latest checks), and the monitor list: failing first, a strip
/// of checks per monitor, search, and pause in one click.
async fn monitors_at_a_glance_searched_and_paused_in_chromium(b: Backend) {
    if !browser_available("monitors_at_a_glance_searched_and_paused_in_chromium") {
        return;
    }
    let good = crate::receiver::Receiver::start().await;
    let bad = crate::receiver::Receiver::start().await;
    bad.otherwise(crate::receiver::Plan::Status(503));
    let (s, d) = crate::admin_ui::signed_in_browser_with(
        b,
        "ad@example.com",
        "admin",
        &[("UPSTATE_MONITOR_ALLOW", "127.0.0.1")],
    )
    .await;
    let page = s.page("acme").await;
    let mut ids = Vec::new();
    for (name, target, enabled) in [
        ("API", format!("{}/health", good.base), true),
        ("Database", format!("{}/health", bad.base), true),
        ("Website", format!("{}/health", good.base), false),
    ] {
        let c = s.component(page, name).await;
        let m = s
            .post(
                "/api/monitors",
                json!({"componentId": c, "target": target, "retries": 0, "enabled": enabled, "intervalSeconds": 600}),
            )
            .await
            .data(201);
        ids.push(m["id"].as_i64().unwrap());
    }
    for (id, want) in [(ids[0], "up"), (ids[1], "down")] {
        let deadline = std::time::Instant::now() + crate::browser::STEP_WITHIN;
        while s.get(&format!("/api/monitors/{id}")).await.data(200)["state"] != want {
            assert!(
                std::time::Instant::now() < deadline,
                "monitor {id} never {want}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    d.c().goto(&format!("{}/admin", s.base)).await.unwrap();
    let card = text(&d, "section[aria-labelledby=h-monitors]").await;
    assert!(
        card.contains("1 up") && card.contains("1 failing") && card.contains("1 paused"),
        "{card}"
    );
    assert!(
        card.contains("Database") && !card.contains("API\n"),
        "{card}"
    );
    assert_eq!(
        d.js("return document.querySelectorAll('section[aria-labelledby=h-monitors] .strip .bar.down').length")
            .await,
        1
    );
    no_axe_violations(&d, "dashboard with monitors").await;
    d.screenshot(&shot(b, "dashboard-monitors")).await;

    d.c()
        .goto(&format!("{}/admin/monitors", s.base))
        .await
        .unwrap();
    let order = "return [...document.querySelectorAll('#h-monitors ~ ul.rows > li strong')].map(e => e.textContent)";
    assert_eq!(
        d.js(order).await,
        json!(["Database", "API", "Website"]),
        "failing first, paused last"
    );
    assert_eq!(
        d.js("return document.querySelectorAll('#h-monitors ~ ul.rows .strip').length")
            .await,
        2,
        "a strip for each monitor that ran"
    );
    no_axe_violations(&d, "monitors with strips").await;
    d.screenshot(&shot(b, "monitors-strips")).await;
    crate::admin_ui::press_named(&d, "Pause API").await;
    assert!(text(&d, "[role=status]").await.contains("Monitor paused"));
    assert_eq!(
        s.get(&format!("/api/monitors/{}", ids[0])).await.data(200)["enabled"],
        false
    );
    assert_eq!(d.js(order).await, json!(["Database", "API", "Website"]));
    crate::admin_ui::press_named(&d, "Resume Website").await;
    assert_eq!(
        s.get(&format!("/api/monitors/{}", ids[2])).await.data(200)["enabled"],
        true
    );
    d.c()
        .goto(&format!("{}/admin/monitors?state=failing", s.base))
        .await
        .unwrap();
    assert_eq!(d.js(order).await, json!(["Database"]));
    d.c()
        .goto(&format!("{}/admin/monitors?q=WEB", s.base))
        .await
        .unwrap();
    assert_eq!(d.js(order).await, json!(["Website"]));
    d.quit().await;
}

/// The install's default language is German: a channel with no language of
/// its own gets German, one set to English gets English, a visitor who
/// subscribed on the page read in French gets French; each test message is
/// in the channel's language.
async fn each_recipient_reads_its_own_language(b: Backend) {
    let rx = crate::receiver::Receiver::start().await;
    let s = crate::support::Server::start_with(b, &[("UPSTATE_OUTGOING_ALLOW", "127.0.0.1")]).await;
    let page = s.page("acme").await;
    let r = s
        .send(
            reqwest::Method::PUT,
            "/api/settings",
            Some(&s.key),
            Some(json!({"defaultLanguage": "de"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let mut channels = Vec::new();
    for (name, lang) in [("Bereitschaft", ""), ("US on-call", "en")] {
        let c = s
            .post(
                "/api/notifications",
                json!({"name": name, "kind": "webhook", "target": format!("{}/{}", rx.base, if lang.is_empty() { "de" } else { lang }), "lang": lang}),
            )
            .await
            .data(201);
        assert_eq!(c["lang"], lang);
        channels.push(c["id"].as_i64().unwrap());
    }
    s.post(
        "/api/notifications",
        json!({"name": "Bad", "kind": "webhook", "target": format!("{}/x", rx.base), "lang": "tlh"}),
    )
    .await
    .invalid_fields(&["lang"]);
    // A visitor's form on the page read in French.
    let form = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(format!("{}/api/subscribers?lang=fr", s.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!(
            "slug=acme&kind=webhook&target={}",
            url::form_urlencoded::byte_serialize(format!("{}/fr", rx.base).as_bytes())
                .collect::<String>()
        ))
        .send()
        .await
        .unwrap();
    assert!(
        form.status().is_redirection() || form.status().is_success(),
        "{}",
        form.status()
    );
    let subs = s.get("/api/subscribers").await.data(200);
    assert_eq!(subs[0]["lang"], "fr", "{subs}");

    s.post(
        "/api/v1/incidents",
        json!({"title": "API", "statusPageId": page, "message": "Wir prüfen."}),
    )
    .await
    .data(201);
    rx.wait_for(3, crate::browser::STEP_WITHIN).await;
    s.quiet().await;
    let mut heard: Vec<(String, String)> = rx
        .got()
        .iter()
        .map(|g| {
            (
                g.path.clone(),
                g.json()["data"]["title"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    heard.sort();
    assert_eq!(
        heard,
        [
            ("/de".to_string(), "Neuer Vorfall: API".to_string()),
            ("/en".to_string(), "New incident: API".to_string()),
            ("/fr".to_string(), "Nouvel incident : API".to_string()),
        ]
    );
    for (id, want) in [
        (channels[0], "Testnachricht für Bereitschaft"),
        (channels[1], "Test message for US on-call"),
    ] {
        s.post_empty(&format!("/api/notifications/{id}/test"))
            .await
            .data(200);
        let last = rx.got().last().unwrap().json();
        assert_eq!(last["data"]["title"], want, "{last}");
    }
}

/// A channel's language is chosen on its screen.
async fn a_channel_language_is_set_in_chromium(b: Backend) {
    if !browser_available("a_channel_language_is_set_in_chromium") {
        return;
    }
    let (s, d) = signed_in_browser(b, "ad@example.com", "admin").await;
    let id = s
        .post(
            "/api/notifications",
            json!({"name": "Ops", "kind": "slack", "target": "https://hooks.slack.com/services/T0/B0/x"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    d.c()
        .goto(&format!("{}/admin/notifications/{id}", s.base))
        .await
        .unwrap();
    crate::admin_ui::field(&d, "Language of its messages")
        .await
        .select_by_value("ja")
        .await
        .unwrap();
    no_axe_violations(&d, "channel with a language").await;
    press(&d, "Save channel").await;
    assert_eq!(
        s.get(&format!("/api/notifications/{id}")).await.data(200)["lang"],
        "ja"
    );
    assert_eq!(value(&d, "Language of its messages").await, "ja");
    d.quit().await;
}

/// A component's description is Markdown where it shows: on the public page
/// and the operator's screens, written with the same live preview.
async fn component_descriptions_are_markdown_in_chromium(b: Backend) {
    if !browser_available("component_descriptions_are_markdown_in_chromium") {
        return;
    }
    let (s, d) = signed_in_browser(b, "ad@example.com", "admin").await;
    let page = s.page("acme").await;
    s.post(
        "/api/v1/components",
        json!({"name": "API", "statusPageId": page, "description": "Runs in **three** regions <script>x()</script>"}),
    )
    .await
    .data(201);
    let html = reqwest::get(format!("{}/s/acme", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        html.contains("<strong>three</strong>"),
        "rendered for visitors"
    );
    assert!(!html.contains("<script>x()"), "and cleaned");
    d.c()
        .goto(&format!("{}/admin/pages/{page}", s.base))
        .await
        .unwrap();
    assert_eq!(text(&d, "li.comp .msg.rendered strong").await, "three");
    crate::admin_ui::click(&d, "Edit API").await;
    fill(&d, "Description of API", "Now in *four* regions").await;
    let shown = d
        .until(
            "var e = document.querySelector('li.comp .preview-body em'); return !!e && e.textContent === 'four'",
            crate::browser::STEP_WITHIN,
        )
        .await;
    assert!(
        shown.is_some(),
        "the edit is previewed as visitors will see it"
    );
    no_axe_violations(&d, "component description preview").await;
    d.quit().await;
}
