use crate::on_both_backends;
use crate::support::{Backend, Server, at_offset_ms};
use reqwest::Method;
use serde_json::{Value, json};
use std::io::Read;

on_both_backends!(
    public_shapes_use_string_ids,
    overall_status_follows_components_and_incidents,
    private_and_unknown_pages_are_not_found,
    bad_public_queries,
    caching_cors_and_compression,
    public_rate_limits_per_route_and_address,
    writes_are_visible_at_once,
    uptime_from_a_constructed_history
);

async fn public(s: &Server, path: &str) -> crate::support::Resp {
    s.send(Method::GET, path, None, None).await
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    k.sort_unstable();
    k
}

async fn public_shapes_use_string_ids(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("acme").await;
    let g = s.group(p, "Core").await;
    let api = s
        .post(
            "/api/v1/components",
            json!({"name": "API", "description": "REST", "statusPageId": p, "groupId": g}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let web = s
        .post(
            "/api/v1/components",
            json!({"name": "Web", "statusPageId": p, "status": "degraded"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let inc = s.post("/api/v1/incidents", json!({"title": "Errors", "statusPageId": p, "impact": "minor", "message": "Looking", "componentIds": [api]})).await.data(201)["id"].as_i64().unwrap();
    s.post(
        &format!("/api/v1/incidents/{inc}/updates"),
        json!({"message": "Found", "status": "identified"}),
    )
    .await
    .data(201);
    let old = s
        .post(
            "/api/v1/incidents",
            json!({"title": "Old", "statusPageId": p, "status": "resolved"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let m = s.post("/api/v1/maintenance", json!({"title": "DB", "statusPageId": p, "scheduledStartTime": "2099-01-01T00:00:00.000Z", "scheduledEndTime": "2099-01-01T02:00:00.000Z", "componentIds": [web]})).await.data(201)["id"].as_i64().unwrap();
    // A window cancelled, and one recorded as it happened long ago.
    let done = s.post("/api/v1/maintenance", json!({"title": "Done", "statusPageId": p, "scheduledStartTime": "2099-03-01T00:00:00.000Z", "scheduledEndTime": "2099-03-01T02:00:00.000Z"})).await.data(201)["id"].as_i64().unwrap();
    s.post_empty(&format!("/api/v1/maintenance/{done}/cancel"))
        .await
        .data(200);
    let past = s.post("/api/v1/maintenance", json!({"title": "Long ago", "statusPageId": p, "scheduledStartTime": "2000-01-01T00:00:00.000Z", "scheduledEndTime": "2000-01-01T02:00:00.000Z"})).await.data(201);
    assert_eq!(past["status"], "completed");

    let r = public(&s, "/api/public/status/acme").await;
    assert_eq!(r.status, 200);
    let sum = &r.body;
    assert_eq!(
        keys(sum),
        [
            "activeIncidents",
            "components",
            "lastUpdated",
            "status",
            "statusLabel"
        ]
    );
    assert_eq!(sum["status"], "degraded");
    assert_eq!(sum["statusLabel"], "Degraded Performance");
    assert_eq!(
        sum["components"],
        json!([{"id": api.to_string(), "name": "API", "status": "operational"}, {"id": web.to_string(), "name": "Web", "status": "degraded"}])
    );
    assert_eq!(sum["activeIncidents"].as_array().unwrap().len(), 1);
    assert_eq!(sum["activeIncidents"][0]["id"], inc.to_string());
    assert!(sum["lastUpdated"].as_str().unwrap().ends_with('Z'));

    let c = public(&s, "/api/public/status/acme/components").await.body;
    assert_eq!(
        c["components"][0],
        json!({"id": api.to_string(), "name": "API", "description": "REST", "status": "operational", "group": "Core", "order": 0})
    );
    assert_eq!(c["components"][1]["group"], json!(null));
    assert_eq!(
        c["groups"],
        json!([{"id": g.to_string(), "name": "Core", "order": 0}])
    );

    let i = public(&s, "/api/public/status/acme/incidents").await.body;
    let list = i["incidents"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(
        keys(&list[0]),
        [
            "affectedComponents",
            "createdAt",
            "id",
            "impact",
            "resolvedAt",
            "status",
            "title",
            "updates"
        ]
    );
    assert_eq!(list[0]["id"], old.to_string(), "newest first");
    assert!(list[0]["resolvedAt"].is_string());
    let open = &list[1];
    assert_eq!(open["affectedComponents"], json!([api.to_string()]));
    assert_eq!(open["status"], "identified");
    assert_eq!(
        open["updates"][0],
        json!({"status": "identified", "message": "Found", "createdAt": open["updates"][0]["createdAt"]})
    );
    assert_eq!(
        keys(&open["updates"][1]),
        ["createdAt", "message", "status"]
    );

    let mt = public(&s, "/api/public/status/acme/maintenance").await.body;
    assert_eq!(
        mt["maintenance"],
        json!([{"id": m.to_string(), "title": "DB", "status": "scheduled", "scheduledStart": "2099-01-01T00:00:00.000Z", "scheduledEnd": "2099-01-01T02:00:00.000Z", "affectedComponents": [web.to_string()]}]),
        "cancelled windows are not listed"
    );

    let whole = public(&s, "/api/v1/public/acme").await;
    assert_eq!(whole.status, 200);
    let w = &whole.body;
    assert_eq!(
        keys(w),
        [
            "activeIncidents",
            "components",
            "groups",
            "incidents",
            "lastUpdated",
            "maintenance",
            "page",
            "status",
            "statusLabel"
        ]
    );
    assert_eq!(w["page"]["id"], p.to_string());
    assert_eq!(w["page"]["slug"], "acme");
    assert_eq!(w["components"], c["components"]);
    assert_eq!(w["maintenance"], mt["maintenance"]);
    assert_eq!(w["status"], "degraded");
}

async fn overall_status_follows_components_and_incidents(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let a = s.component(p, "A").await;
    let bb = s.component(p, "B").await;
    let status = async || public(&s, "/api/public/status/p").await.body;
    assert_eq!(status().await["statusLabel"], "All Systems Operational");
    s.patch(
        &format!("/api/v1/components/{a}/status"),
        json!({"status": "maintenance"}),
    )
    .await
    .data(200);
    assert_eq!(status().await["status"], "maintenance");
    assert_eq!(status().await["statusLabel"], "Under Maintenance");
    s.patch(
        &format!("/api/v1/components/{bb}/status"),
        json!({"status": "partial_outage"}),
    )
    .await
    .data(200);
    assert_eq!(status().await["statusLabel"], "Partial System Outage");
    let inc = s
        .post(
            "/api/v1/incidents",
            json!({"title": "Down", "statusPageId": p, "impact": "critical"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    assert_eq!(status().await["status"], "major_outage");
    assert_eq!(status().await["statusLabel"], "Major System Outage");
    s.post_empty(&format!("/api/v1/incidents/{inc}/resolve"))
        .await
        .data(200);
    assert_eq!(
        status().await["status"],
        "partial_outage",
        "resolved incidents do not count"
    );
}

async fn private_and_unknown_pages_are_not_found(b: Backend) {
    let s = Server::start(b).await;
    let p = s
        .post(
            "/api/v1/statuspages",
            json!({"name": "Hidden", "slug": "hidden", "isPublic": false}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    for path in ["", "/components", "/incidents", "/maintenance", "/uptime"] {
        for slug in ["hidden", "no-such-page"] {
            let r = public(&s, &format!("/api/public/status/{slug}{path}")).await;
            r.problem(404);
            assert_eq!(
                r.header("access-control-allow-origin"),
                Some("*"),
                "errors are readable cross-origin too"
            );
        }
    }
    public(&s, "/api/v1/public/hidden").await.problem(404);
    public(&s, "/api/v1/public/nope").await.problem(404);
    // Publishing takes effect at once.
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"isPublic": true}),
    )
    .await
    .data(200);
    assert_eq!(public(&s, "/api/public/status/hidden").await.status, 200);
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"isPublic": false}),
    )
    .await
    .data(200);
    public(&s, "/api/public/status/hidden").await.problem(404);
    // A renamed slug moves the page.
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"isPublic": true, "slug": "shown"}),
    )
    .await
    .data(200);
    public(&s, "/api/public/status/hidden").await.problem(404);
    assert_eq!(public(&s, "/api/public/status/shown").await.status, 200);
}

async fn bad_public_queries(b: Backend) {
    let s = Server::start(b).await;
    s.page("p").await;
    for q in ["days=abc", "days=0", "days=366", "days=-5"] {
        public(&s, &format!("/api/public/status/p/uptime?{q}"))
            .await
            .invalid_fields(&["days"]);
    }
    for q in ["limit=-1", "limit=abc", "limit=0", "limit=101"] {
        public(&s, &format!("/api/public/status/p/incidents?{q}"))
            .await
            .invalid_fields(&["limit"]);
    }
    public(&s, "/api/public/status/p/incidents?status=bogus")
        .await
        .invalid_fields(&["status"]);
    assert_eq!(
        public(&s, "/api/public/status/p/uptime?days=365")
            .await
            .body["page"]
            .as_array()
            .unwrap()
            .len(),
        365
    );
    assert_eq!(
        public(&s, "/api/public/status/p/uptime").await.body["days"],
        90,
        "default"
    );
}

async fn caching_cors_and_compression(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    s.component(p, "A").await;
    let client = reqwest::Client::new();
    for path in ["", "/components", "/incidents", "/maintenance", "/uptime"] {
        let url = format!("{}/api/public/status/p{path}", s.base);
        let r = client.get(&url).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let h = r.headers().clone();
        assert_eq!(h["content-type"], "application/json");
        assert_eq!(h["access-control-allow-origin"], "*");
        assert_eq!(h["cache-control"], "public, max-age=30");
        for name in [
            "x-ratelimit-limit",
            "x-ratelimit-remaining",
            "x-ratelimit-reset",
        ] {
            assert!(h.contains_key(name), "{path}: {name}");
        }
        let etag = h["etag"].to_str().unwrap().to_string();
        assert!(
            etag.starts_with('"') && etag.ends_with('"'),
            "strong ETag: {etag}"
        );
        let plain = r.bytes().await.unwrap();
        let again = client
            .get(&url)
            .header("if-none-match", &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 304, "{path}");
        assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
        assert!(again.bytes().await.unwrap().is_empty());

        let gz = client
            .get(&url)
            .header("accept-encoding", "gzip")
            .send()
            .await
            .unwrap();
        assert_eq!(gz.headers()["content-encoding"], "gzip");
        assert_ne!(
            gz.headers()["etag"].to_str().unwrap(),
            etag,
            "each encoding has its own strong ETag"
        );
        let mut out = vec![];
        flate2::read::GzDecoder::new(&gz.bytes().await.unwrap()[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, plain);
        let br = client
            .get(&url)
            .header("accept-encoding", "gzip, br")
            .send()
            .await
            .unwrap();
        assert_eq!(br.headers()["content-encoding"], "br");
        let mut out = vec![];
        brotli::Decompressor::new(&br.bytes().await.unwrap()[..], 4096)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, plain);
        let refused = client
            .get(&url)
            .header("accept-encoding", "br;q=0, gzip;q=0")
            .send()
            .await
            .unwrap();
        assert!(refused.headers().get("content-encoding").is_none());

        let pre = client
            .request(Method::OPTIONS, &url)
            .header("origin", "https://example.org")
            .header("access-control-request-method", "GET")
            .header("access-control-request-headers", "if-none-match")
            .send()
            .await
            .unwrap();
        assert!(
            pre.status().is_success(),
            "{path}: preflight {}",
            pre.status()
        );
        assert_eq!(pre.headers()["access-control-allow-origin"], "*");
        assert!(
            pre.headers()["access-control-allow-methods"]
                .to_str()
                .unwrap()
                .contains("GET")
        );
    }
    // A change gives a new ETag, so the old one no longer matches.
    let first = client
        .get(format!("{}/api/public/status/p", s.base))
        .send()
        .await
        .unwrap()
        .headers()["etag"]
        .clone();
    s.component(p, "B").await;
    let r = client
        .get(format!("{}/api/public/status/p", s.base))
        .header("if-none-match", first)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

async fn public_rate_limits_per_route_and_address(b: Backend) {
    let s = Server::start_with(b, &[("UPSTATE_TRUSTED_PROXIES", "127.0.0.1")]).await;
    s.page("p").await;
    let client = reqwest::Client::new();
    let hit = async |path: &str, from: &str| {
        client
            .get(format!("{}/api/public/status/p{path}", s.base))
            .header("x-forwarded-for", from)
            .send()
            .await
            .unwrap()
    };
    for (path, limit) in [
        ("", 100),
        ("/components", 60),
        ("/incidents", 30),
        ("/maintenance", 30),
        ("/uptime", 30),
    ] {
        for n in 1..=limit {
            let r = hit(path, "198.51.100.1").await;
            assert_eq!(r.status(), 200, "{path} request {n}");
            assert_eq!(
                r.headers()["x-ratelimit-limit"].to_str().unwrap(),
                limit.to_string()
            );
        }
        let r = hit(path, "198.51.100.1").await;
        assert_eq!(r.status(), 429, "{path} request {}", limit + 1);
        assert!(
            r.headers()["retry-after"]
                .to_str()
                .unwrap()
                .parse::<u64>()
                .unwrap()
                >= 1
        );
        assert_eq!(r.headers()["content-type"], "application/problem+json");
        // Another client address behind the trusted proxy has its own quota.
        assert_eq!(hit(path, "198.51.100.2").await.status(), 200, "{path}");
    }
    // The routes count separately: the page route is still open for the first client.
    let r = client
        .get(format!("{}/api/v1/public/p", s.base))
        .header("x-forwarded-for", "198.51.100.1")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    // Without a trusted proxy, X-Forwarded-For is ignored: the socket peer counts.
    let plain = Server::start_with(b, &[("UPSTATE_PUBLIC_RATE_SUMMARY", "2")]).await;
    plain.page("p").await;
    for (n, from) in ["203.0.113.1", "203.0.113.2", "203.0.113.3"]
        .iter()
        .enumerate()
    {
        let r = client
            .get(format!("{}/api/public/status/p", plain.base))
            .header("x-forwarded-for", *from)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), if n < 2 { 200 } else { 429 });
    }
}

async fn writes_are_visible_at_once(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("live").await;
    let summary = async || public(&s, "/api/public/status/live").await.body;
    assert_eq!(summary().await["components"], json!([]));
    let c = s.component(p, "API").await;
    assert_eq!(summary().await["components"][0]["name"], "API");
    s.patch(
        &format!("/api/v1/components/{c}/status"),
        json!({"status": "major_outage"}),
    )
    .await
    .data(200);
    assert_eq!(summary().await["components"][0]["status"], "major_outage");
    s.patch(
        &format!("/api/v1/components/{c}"),
        json!({"name": "Public API"}),
    )
    .await
    .data(200);
    assert_eq!(summary().await["components"][0]["name"], "Public API");
    let g = s.group(p, "Core").await;
    s.patch(&format!("/api/v1/components/{c}"), json!({"groupId": g}))
        .await
        .data(200);
    assert_eq!(
        public(&s, "/api/public/status/live/components").await.body["components"][0]["group"],
        "Core"
    );
    s.patch(
        &format!("/api/v1/component-groups/{g}"),
        json!({"name": "Platform"}),
    )
    .await
    .data(200);
    assert_eq!(
        public(&s, "/api/public/status/live/components").await.body["components"][0]["group"],
        "Platform"
    );
    s.delete(&format!("/api/v1/component-groups/{g}"))
        .await
        .data(200);
    assert_eq!(
        public(&s, "/api/public/status/live/components").await.body["groups"],
        json!([])
    );

    let inc = s.incident(p, "Outage").await["id"].as_i64().unwrap();
    assert_eq!(summary().await["activeIncidents"][0]["title"], "Outage");
    s.post(
        &format!("/api/v1/incidents/{inc}/updates"),
        json!({"message": "Fixing", "status": "identified"}),
    )
    .await
    .data(201);
    assert_eq!(
        public(&s, "/api/public/status/live/incidents").await.body["incidents"][0]["updates"][0]["message"],
        "Fixing"
    );
    s.patch(
        &format!("/api/v1/incidents/{inc}"),
        json!({"title": "Big outage"}),
    )
    .await
    .data(200);
    assert_eq!(summary().await["activeIncidents"][0]["title"], "Big outage");
    s.post_empty(&format!("/api/v1/incidents/{inc}/resolve"))
        .await
        .data(200);
    assert_eq!(summary().await["activeIncidents"], json!([]));
    s.delete(&format!("/api/v1/incidents/{inc}"))
        .await
        .data(200);
    assert_eq!(
        public(&s, "/api/public/status/live/incidents").await.body["incidents"],
        json!([])
    );

    let m = s
        .post("/api/v1/maintenance", json!({"title": "Window", "statusPageId": p, "scheduledStartTime": at_offset_ms(3_600_000), "scheduledEndTime": at_offset_ms(7_200_000), "componentIds": [c]}))
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    assert_eq!(
        public(&s, "/api/public/status/live/maintenance").await.body["maintenance"][0]["status"],
        "scheduled"
    );
    s.post_empty(&format!("/api/v1/maintenance/{m}/start"))
        .await
        .data(200);
    assert_eq!(
        public(&s, "/api/public/status/live/maintenance").await.body["maintenance"][0]["status"],
        "in_progress"
    );
    assert_eq!(summary().await["components"][0]["status"], "maintenance");
    s.patch(
        &format!("/api/v1/maintenance/{m}"),
        json!({"title": "Renamed window"}),
    )
    .await
    .data(200);
    assert_eq!(
        public(&s, "/api/public/status/live/maintenance").await.body["maintenance"][0]["title"],
        "Renamed window"
    );
    s.post_empty(&format!("/api/v1/maintenance/{m}/complete"))
        .await
        .data(200);
    assert_eq!(
        public(&s, "/api/public/status/live/maintenance").await.body["maintenance"],
        json!([])
    );

    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"name": "Live!"}),
    )
    .await
    .data(200);
    assert_eq!(
        public(&s, "/api/v1/public/live").await.body["page"]["name"],
        "Live!"
    );
    s.delete(&format!("/api/v1/components/{c}")).await.data(200);
    assert_eq!(summary().await["components"], json!([]));
    s.delete(&format!("/api/v1/statuspages/{p}"))
        .await
        .data(200);
    public(&s, "/api/public/status/live").await.problem(404);
}

/// Local midnight today in a fixed UTC+14 zone (Pacific/Kiritimati has no DST), in ms.
fn kiritimati_midnight_ms() -> i64 {
    let now =
        time::OffsetDateTime::now_utc().to_offset(time::UtcOffset::from_hms(14, 0, 0).unwrap());
    now.replace_time(time::Time::MIDNIGHT).unix_timestamp() * 1000
}

async fn uptime_from_a_constructed_history(b: Backend) {
    let s = Server::start(b).await;
    let p = s
        .post(
            "/api/v1/statuspages",
            json!({"name": "Far east", "slug": "east", "timeZone": "Pacific/Kiritimati"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let a = s.component(p, "A").await;
    let bb = s.component(p, "B").await;
    let l = kiritimati_midnight_ms();
    let h = 3_600_000i64;
    // A: up for ten days; day -2: 12 h partial + an outage from 23:00 that runs
    // into day -1 until 01:00; day -1: another 6 h major outage.
    let a_history = [
        ("operational", l - 240 * h),
        ("partial_outage", l - 48 * h),
        ("operational", l - 36 * h),
        ("major_outage", l - 25 * h),
        ("operational", l - 23 * h),
        ("major_outage", l - 18 * h),
        ("operational", l - 12 * h),
    ];
    s.db.execute(&format!(
        "DELETE FROM component_status_history WHERE component_id IN ({a}, {bb})"
    ))
    .await;
    for (status, at) in a_history {
        s.db.execute(&format!(
            "INSERT INTO component_status_history (component_id, status, changed_at) VALUES ({a}, '{status}', {at})"
        ))
        .await;
    }
    // B exists only since day -2, 18:00.
    s.db.execute(&format!(
        "INSERT INTO component_status_history (component_id, status, changed_at) VALUES ({bb}, 'operational', {})",
        l - 30 * h
    ))
    .await;

    let r = public(&s, "/api/public/status/east/uptime?days=4").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let u = &r.body;
    assert_eq!(u["days"], 4);
    assert_eq!(u["timeZone"], "Pacific/Kiritimati");
    let today = time::OffsetDateTime::from_unix_timestamp(l / 1000)
        .unwrap()
        .to_offset(time::UtcOffset::from_hms(14, 0, 0).unwrap())
        .date();
    let dates: Vec<String> = (0..4)
        .rev()
        .map(|d| (today - time::Duration::days(d)).to_string())
        .collect();
    let comp = |id: i64| {
        u["components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"].as_str() == Some(id.to_string().as_str()))
            .unwrap()
            .clone()
    };
    let (ca, cb) = (comp(a), comp(bb));
    let day = |c: &Value, i: usize| c["days"][i].clone();
    for (i, date) in dates.iter().enumerate() {
        assert_eq!(
            day(&ca, i)["date"],
            date.as_str(),
            "calendar days of the page's zone"
        );
    }
    let close = |v: &Value, want: f64| (v.as_f64().unwrap() - want).abs() < 0.002;
    assert!(close(&day(&ca, 0)["uptime"], 100.0));
    // Day -2: 12 h at 30% (3.6 h) + 1 h down = 4.6 h of 24.
    assert!(
        close(&day(&ca, 1)["uptime"], 100.0 * (1.0 - 4.6 / 24.0)),
        "{}",
        day(&ca, 1)
    );
    assert_eq!(day(&ca, 1)["worstStatus"], "major_outage");
    assert_eq!(day(&ca, 1)["outageMinutes"], 780);
    // Day -1: 1 h carried over from the split outage + 6 h.
    assert!(
        close(&day(&ca, 2)["uptime"], 100.0 * (1.0 - 7.0 / 24.0)),
        "{}",
        day(&ca, 2)
    );
    assert_eq!(day(&ca, 2)["outageMinutes"], 420);
    assert!(close(&day(&ca, 3)["uptime"], 100.0));
    assert_eq!(day(&ca, 3)["worstStatus"], "operational");
    // B: no data before it existed (not 100%), then fully up.
    assert_eq!(day(&cb, 0)["uptime"], json!(null));
    assert_eq!(day(&cb, 0)["worstStatus"], json!(null));
    assert!(close(&day(&cb, 1)["uptime"], 100.0));
    // The page: mean of the components with data each day.
    assert!(close(&u["page"][0]["uptime"], 100.0));
    assert!(close(
        &u["page"][2]["uptime"],
        (100.0 * (1.0 - 7.0 / 24.0) + 100.0) / 2.0
    ));
    assert_eq!(u["page"][2]["worstStatus"], "major_outage");
}
