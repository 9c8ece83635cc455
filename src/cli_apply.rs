//! `upstate apply -f upstate.yaml` and `upstate diff -f upstate.yaml`: the
//! setup as code (docs/setup-as-code.md). The file declares pages with
//! their groups, components, monitors and vendors, channels, incident
//! templates, integrations and settings; apply makes the install match it
//! through the API, and diff says where the install has drifted from it.
//!
//! Everything goes through the HTTP API, so the same checks, audit and
//! change events apply as for a person. Without `--server` the command
//! serves this install's database on a loopback port for the length of the
//! run, with a key of its own that it revokes when done.
//!
//! What apply manages is recorded on the server (`/api/managed`): an
//! object it made, or one of the same name it adopted. Only those are ever
//! deleted, and only when the file no longer declares them.

use crate::cli_remote::{answer, request};
use anyhow::Context;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use upstate::config::Config;
use upstate_core::audit::Actor;
use upstate_core::scope::Scope;
use upstate_core::setup::{ManagedKind, ManagedObject, SetupFile};
use upstate_store::AuditCtx;
use upstate_store::api_keys;

/// Where the install is: a server through its API, or (neither given)
/// this install's database.
#[derive(clap::Args)]
pub struct Target {
    /// The setup file (YAML).
    #[arg(short = 'f', long = "file")]
    file: Option<PathBuf>,
    /// A server to work on through its API (default: this install's own
    /// database, served on a loopback port for the run).
    #[arg(long, env = "UPSTATE_SERVER")]
    server: Option<String>,
    /// An API key with the admin scope, for `--server`.
    #[arg(long = "key", env = "UPSTATE_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
}

#[derive(clap::Args)]
pub struct ApplyArgs {
    #[command(flatten)]
    target: Target,
    /// Print the plan and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print the setup file's JSON Schema and exit.
    #[arg(long)]
    schema: bool,
}

#[derive(clap::Args)]
pub struct DiffArgs {
    #[command(flatten)]
    target: Target,
}

impl ApplyArgs {
    /// Whether it runs without this machine's configuration.
    pub fn remote(&self) -> bool {
        self.schema || self.target.server.is_some()
    }
}

impl DiffArgs {
    pub fn remote(&self) -> bool {
        self.target.server.is_some()
    }
}

/// `upstate apply`: the plan, then (unless `--dry-run`) the run.
pub async fn apply(args: ApplyArgs, local: Option<&Config>) -> anyhow::Result<()> {
    if args.schema {
        println!("{}", schema());
        return Ok(());
    }
    let done = on_target(&args.target, local, args.dry_run).await?;
    print!("{}", report(&done.steps, args.dry_run).0);
    for n in &done.notes {
        println!("{n}");
    }
    Ok(())
}

/// `upstate diff`: the plan; exits 2 when the install has drifted.
pub async fn diff(args: DiffArgs, local: Option<&Config>) -> anyhow::Result<()> {
    let done = on_target(&args.target, local, true).await?;
    let (text, drift) = report(&done.steps, true);
    print!("{text}");
    if drift {
        std::process::exit(2);
    }
    Ok(())
}

async fn on_target(t: &Target, local: Option<&Config>, dry: bool) -> anyhow::Result<Outcome> {
    let file = t
        .file
        .as_deref()
        .context("say which setup file: -f upstate.yaml")?;
    let setup = read(file)?;
    match (&t.server, local) {
        (Some(server), _) => {
            let key = t.api_key.as_deref().context(
                "--server needs --key (or UPSTATE_API_KEY): an API key with the admin scope",
            )?;
            run(&setup, server, key, dry).await
        }
        (None, Some(config)) => on_local(config, &setup, dry).await,
        (None, None) => anyhow::bail!("say which server: --server URL --key KEY"),
    }
}

/// Runs on this install's database: its API served on a loopback port
/// for the run, with a key made for it and revoked after. No job loop
/// runs here; what the changes tell people is sent by the service.
async fn on_local(config: &Config, setup: &Setup, dry: bool) -> anyhow::Result<Outcome> {
    let db = upstate::service::open(config).await?;
    let ctx = AuditCtx::of(Actor::cli());
    let expires = db.clock.now().plus_millis(3_600_000);
    let (key, secret) =
        api_keys::create(&db, &ctx, "upstate apply", &[Scope::Admin], Some(expires)).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    // Links the answers carry (a new integration's receiver URL, printed
    // once) must be the service's, not this run's port, which is gone
    // when the run ends.
    let mut settings = config.server.clone();
    if settings.public_url.is_empty() {
        settings.public_url = format!("http://{}", config.addr);
    }
    let sender = upstate_jobs::Sender::new(config.delivery.clone()).map_err(anyhow::Error::msg)?;
    let checker =
        upstate_jobs::monitors::Checker::new(&config.monitors).map_err(anyhow::Error::msg)?;
    let app = upstate_server::app(db.clone(), &settings, sender, checker);
    let stop = tokio_util::sync::CancellationToken::new();
    let until = stop.clone();
    let serving = tokio::spawn(upstate_server::serve(
        listener,
        app,
        &settings,
        async move { until.cancelled().await },
    ));
    let result = run(setup, &format!("http://{addr}"), &secret, dry).await;
    stop.cancel();
    let _ = serving.await;
    api_keys::revoke(&db, &ctx, key.id).await?;
    db.close().await;
    result
}

/// The setup file's JSON Schema (2020-12), from the same types that read
/// it, so the schema and the reader cannot disagree.
pub fn schema() -> String {
    use utoipa::OpenApi;
    #[derive(OpenApi)]
    #[openapi(components(schemas(upstate_core::setup::SetupFile)))]
    struct Doc;
    let doc = Doc::openapi();
    let mut defs = serde_json::to_value(doc.components.map(|c| c.schemas).unwrap_or_default())
        .unwrap_or_default();
    let root = defs
        .as_object_mut()
        .and_then(|d| d.remove("SetupFile"))
        .unwrap_or_default();
    let mut out = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://upstate.dev/schemas/upstate.yaml.json",
        "title": "Upstate setup file (upstate apply -f upstate.yaml)",
    });
    if let (Some(o), Some(r)) = (out.as_object_mut(), root.as_object()) {
        for (k, v) in r {
            o.insert(k.clone(), v.clone());
        }
        o.insert("$defs".into(), defs);
    }
    serde_json::to_string_pretty(&out)
        .unwrap_or_default()
        .replace("#/components/schemas/", "#/$defs/")
}

/// A setup file read and checked: its typed form (which named each error's
/// line) and the same document as JSON, whose monitor and vendor maps are
/// sent to the API as written.
pub struct Setup {
    typed: SetupFile,
    raw: Value,
}

/// Reads `path`: shape errors name their line, the rest their place.
pub fn read(path: &std::path::Path) -> anyhow::Result<Setup> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let typed: SetupFile = serde_yaml_ng::from_str(&text).map_err(|e| match e.location() {
        Some(at) => anyhow::anyhow!("{}:{}:{}: {e}", path.display(), at.line(), at.column()),
        None => anyhow::anyhow!("{}: {e}", path.display()),
    })?;
    let problems = typed.check();
    if !problems.is_empty() {
        anyhow::bail!("{}:\n  {}", path.display(), problems.join("\n  "));
    }
    let raw: Value = serde_yaml_ng::from_str(&text)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(Setup { typed, raw })
}

/// What a run does to one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Create,
    /// The fields that differ; `adopt` when it was not managed yet.
    Change {
        fields: Vec<String>,
        adopt: bool,
    },
    /// Matches the file; `adopt` when it was not managed yet.
    Keep {
        adopt: bool,
    },
    Delete,
}

/// The run: its steps in order, and what it manages afterwards.
pub struct Run<'a> {
    server: &'a str,
    key: &'a str,
    dry: bool,
    managed: Vec<ManagedObject>,
    kept: Vec<ManagedObject>,
    pub steps: Vec<(ManagedKind, String, Step)>,
    /// What a person must see once (a new integration's receiver URL).
    notes: Vec<String>,
}

impl Run<'_> {
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> anyhow::Result<Value> {
        request(self.server, self.key, method, path, body).await
    }

    /// Every item of a list, following `nextCursor` where it is paged.
    async fn list(&self, path: &str) -> anyhow::Result<Vec<Value>> {
        let mut all = Vec::new();
        let mut at = path.to_string();
        loop {
            let doc = answer(self.server, self.key, "GET", &at, None).await?;
            let items = doc.get("data").unwrap_or(&doc);
            all.extend(items.as_array().cloned().unwrap_or_default());
            match doc["nextCursor"].as_str() {
                Some(next) => at = format!("{path}?cursor={next}"),
                None => return Ok(all),
            }
        }
    }

    fn is_managed(&self, kind: ManagedKind, id: i64) -> bool {
        self.managed.iter().any(|m| m.kind == kind && m.id == id)
    }

    /// Makes `current` (if any) match `want`: creates with `create` (POST
    /// to it), changes with `method` on `item` (`{id}` filled), or keeps.
    /// Returns the object's id (None: it would be made, in a dry run).
    #[allow(clippy::too_many_arguments)]
    async fn settle(
        &mut self,
        kind: ManagedKind,
        key: String,
        current: Option<&Value>,
        want: Value,
        create: &str,
        method: &str,
        item: &str,
        whole: bool,
    ) -> anyhow::Result<Option<i64>> {
        let Some(cur) = current else {
            self.steps.push((kind, key.clone(), Step::Create));
            if self.dry {
                return Ok(None);
            }
            let made = self.call("POST", create, Some(want)).await?;
            let id = made["id"]
                .as_i64()
                .context("the server answered a creation without an id")?;
            if let Some(url) = made["receiverUrl"].as_str() {
                self.notes
                    .push(format!("{key}: its receiver URL, shown this once: {url}"));
            }
            self.kept.push(ManagedObject { kind, id, key });
            return Ok(Some(id));
        };
        let id = cur["id"].as_i64().context("an object without an id")?;
        let adopt = !self.is_managed(kind, id);
        let fields = differing(&want, cur);
        if fields.is_empty() {
            self.steps.push((kind, key.clone(), Step::Keep { adopt }));
        } else {
            self.steps.push((
                kind,
                key.clone(),
                Step::Change {
                    fields: fields.clone(),
                    adopt,
                },
            ));
            if !self.dry {
                let body = if whole {
                    want
                } else {
                    let mut only = Map::new();
                    for f in &fields {
                        only.insert(f.clone(), want[f.as_str()].clone());
                    }
                    Value::Object(only)
                };
                self.call(method, &item.replace("{id}", &id.to_string()), Some(body))
                    .await?;
            }
        }
        self.kept.push(ManagedObject { kind, id, key });
        Ok(Some(id))
    }
}

/// The fields of `want` whose value `current` does not have. A field the
/// server does not show back (a bot token) cannot differ.
fn differing(want: &Value, current: &Value) -> Vec<String> {
    let Some(w) = want.as_object() else {
        return Vec::new();
    };
    w.iter()
        .filter(|(k, v)| match current.get(k.as_str()) {
            Some(c) => !same(v, c),
            None => false,
        })
        .map(|(k, _)| k.clone())
        .collect()
}

/// JSON equality that reads 60 and 60.0 alike.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        _ => a == b,
    }
}

fn find<'v>(list: &'v [Value], field: &str, value: &Value) -> Option<&'v Value> {
    list.iter().find(|x| same(&x[field], value))
}

/// A map of the file's JSON at `pointer`, without `componentId`.
fn raw_map(raw: &Value, pointer: &str) -> Value {
    let mut m = raw
        .pointer(pointer)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    m.remove("componentId");
    Value::Object(m)
}

/// Makes a page's access what the file says, field by field (never
/// deleted: it is part of the page, like the install's settings).
async fn settle_access(
    r: &mut Run<'_>,
    p: &upstate_core::setup::PageDecl,
    page: i64,
) -> anyhow::Result<()> {
    let Some(a) = &p.access else {
        return Ok(());
    };
    let path = format!("/api/v1/statuspages/{page}/access");
    let current = r.call("GET", &path, None).await?;
    // As the server keeps them (networks normalised, domains lowercased).
    let kept = a
        .clone()
        .apply(&upstate_core::access::PageAccess::default())
        .map_err(|e| anyhow::anyhow!("{}.access: {e:?}", p.slug))?;
    let kept = serde_json::to_value(&kept)?;
    let mut want = Map::new();
    for (field, set) in [
        ("allowedNetworks", a.allowed_networks.is_some()),
        ("viewers", a.viewers.is_some()),
        ("viewerDomains", a.viewer_domains.is_some()),
        ("viewerSso", a.viewer_sso.is_some()),
    ] {
        if set {
            want.insert(field.into(), kept[field].clone());
        }
    }
    let fields = differing(&Value::Object(want.clone()), &current);
    if fields.is_empty() {
        r.steps.push((
            ManagedKind::Access,
            p.slug.clone(),
            Step::Keep { adopt: false },
        ));
        return Ok(());
    }
    r.steps.push((
        ManagedKind::Access,
        p.slug.clone(),
        Step::Change {
            fields: fields.clone(),
            adopt: false,
        },
    ));
    if !r.dry {
        let only: Map<String, Value> = fields
            .iter()
            .map(|f| (f.clone(), want[f.as_str()].clone()))
            .collect();
        r.call("PUT", &path, Some(Value::Object(only))).await?;
    }
    Ok(())
}

/// Plans, or applies, `setup` on the server; the steps taken.
pub async fn run(setup: &Setup, server: &str, key: &str, dry: bool) -> anyhow::Result<Outcome> {
    let managed: Vec<ManagedObject> =
        serde_json::from_value(request(server, key, "GET", "/api/managed", None).await?)
            .context("the server's list of managed objects")?;
    let mut r = Run {
        server,
        key,
        dry,
        managed,
        kept: Vec::new(),
        steps: Vec::new(),
        notes: Vec::new(),
    };
    let f = &setup.typed;
    let pages = r.list("/api/v1/statuspages").await?;
    let monitors = r.list("/api/monitors").await?;
    let follows = r.list("/api/third-party").await?;
    let mut page_ids: HashMap<String, i64> = HashMap::new();
    // Each page's components by name (None: still to be made).
    let mut component_ids: HashMap<(String, String), Option<i64>> = HashMap::new();
    for (i, p) in f.pages.iter().enumerate() {
        let mut want = json!({ "slug": p.slug, "name": p.name });
        if let Some(d) = &p.description {
            want["description"] = json!(d);
        }
        if let Some(v) = p.is_public {
            want["isPublic"] = json!(v);
        }
        if let Some(z) = &p.time_zone {
            want["timeZone"] = json!(z);
        }
        let current = find(&pages, "slug", &json!(p.slug));
        let Some(page) = r
            .settle(
                ManagedKind::Page,
                p.slug.clone(),
                current,
                want,
                "/api/v1/statuspages",
                "PATCH",
                "/api/v1/statuspages/{id}",
                false,
            )
            .await?
        else {
            // A page still to make: everything in it is made with it.
            for g in &p.groups {
                r.steps.push((
                    ManagedKind::Group,
                    format!("{}/{}", p.slug, g.name),
                    Step::Create,
                ));
            }
            for c in &p.components {
                let key = format!("{}/{}", p.slug, c.name);
                r.steps
                    .push((ManagedKind::Component, key.clone(), Step::Create));
                if c.monitor.is_some() {
                    r.steps
                        .push((ManagedKind::Monitor, key.clone(), Step::Create));
                }
                if c.third_party.is_some() {
                    r.steps.push((ManagedKind::ThirdParty, key, Step::Create));
                }
            }
            if p.access.is_some() {
                r.steps
                    .push((ManagedKind::Access, p.slug.clone(), Step::Create));
            }
            for v in &p.viewers {
                r.steps.push((
                    ManagedKind::Viewer,
                    format!("{}/{}", p.slug, v.to_lowercase()),
                    Step::Create,
                ));
            }
            for a in &p.audiences {
                r.steps.push((
                    ManagedKind::Audience,
                    format!("{}/{}", p.slug, a.name),
                    Step::Create,
                ));
            }
            continue;
        };
        page_ids.insert(p.slug.clone(), page);
        let groups = r
            .list(&format!("/api/v1/component-groups?statusPageId={page}"))
            .await?;
        let mut group_ids: HashMap<&str, Option<i64>> = HashMap::new();
        for (order, g) in p.groups.iter().enumerate() {
            let want = json!({ "name": g.name, "statusPageId": page, "order": order });
            let id = r
                .settle(
                    ManagedKind::Group,
                    format!("{}/{}", p.slug, g.name),
                    find(&groups, "name", &json!(g.name)),
                    want,
                    "/api/v1/component-groups",
                    "PATCH",
                    "/api/v1/component-groups/{id}",
                    false,
                )
                .await?;
            group_ids.insert(g.name.as_str(), id);
        }
        let components = r
            .list(&format!("/api/v1/components?statusPageId={page}"))
            .await?;
        for (order, c) in p.components.iter().enumerate() {
            let key = format!("{}/{}", p.slug, c.name);
            let mut want = json!({ "name": c.name, "statusPageId": page, "order": order });
            if let Some(d) = &c.description {
                want["description"] = json!(d);
            }
            let group = c
                .group
                .as_deref()
                .map(|g| group_ids.get(g).copied().flatten());
            match group {
                // Its group is still to be made (a dry run): so is the move.
                Some(None) => {}
                Some(Some(g)) => want["groupId"] = json!(g),
                None => want["groupId"] = Value::Null,
            }
            let current = find(&components, "name", &json!(c.name));
            let id = r
                .settle(
                    ManagedKind::Component,
                    key.clone(),
                    current,
                    want,
                    "/api/v1/components",
                    "PATCH",
                    "/api/v1/components/{id}",
                    false,
                )
                .await?;
            component_ids.insert((p.slug.clone(), c.name.clone()), id);
            let here = format!("/pages/{i}/components/{order}");
            if c.monitor.is_some() {
                let mut want = raw_map(&setup.raw, &format!("{here}/monitor"));
                let current = id.and_then(|id| find(&monitors, "componentId", &json!(id)));
                if let Some(id) = id {
                    want["componentId"] = json!(id);
                }
                if id.is_none() {
                    r.steps
                        .push((ManagedKind::Monitor, key.clone(), Step::Create));
                } else {
                    r.settle(
                        ManagedKind::Monitor,
                        key.clone(),
                        current,
                        want,
                        "/api/monitors",
                        "PUT",
                        "/api/monitors/{id}",
                        false,
                    )
                    .await?;
                }
            }
            if c.third_party.is_some() {
                let mut want = raw_map(&setup.raw, &format!("{here}/thirdParty"));
                let current = id.and_then(|id| find(&follows, "componentId", &json!(id)));
                if let Some(id) = id {
                    want["componentId"] = json!(id);
                }
                if id.is_none() {
                    r.steps
                        .push((ManagedKind::ThirdParty, key.clone(), Step::Create));
                } else {
                    r.settle(
                        ManagedKind::ThirdParty,
                        key.clone(),
                        current,
                        want,
                        "/api/third-party",
                        "PATCH",
                        "/api/third-party/{id}",
                        false,
                    )
                    .await?;
                }
            }
        }
        settle_access(&mut r, p, page).await?;
        let viewers = r
            .list(&format!("/api/v1/statuspages/{page}/viewers"))
            .await?;
        for v in &p.viewers {
            let email = v.trim().to_lowercase();
            r.settle(
                ManagedKind::Viewer,
                format!("{}/{email}", p.slug),
                find(&viewers, "email", &json!(email)),
                json!({ "email": email }),
                &format!("/api/v1/statuspages/{page}/viewers"),
                "POST",
                &format!("/api/v1/statuspages/{page}/viewers"),
                false,
            )
            .await?;
        }
        let audiences = r
            .list(&format!("/api/v1/statuspages/{page}/audiences"))
            .await?;
        for a in &p.audiences {
            let key = format!("{}/{}", p.slug, a.name);
            let ids: Vec<Option<i64>> = a
                .components
                .iter()
                .map(|n| {
                    component_ids
                        .get(&(p.slug.clone(), n.clone()))
                        .copied()
                        .flatten()
                })
                .collect();
            let current = find(&audiences, "name", &json!(a.name));
            if !ids.iter().all(Option::is_some) {
                // Its components are still to be made (a dry run).
                let step = match current {
                    None => Step::Create,
                    Some(_) => Step::Change {
                        fields: vec!["componentIds".into()],
                        adopt: false,
                    },
                };
                r.steps.push((ManagedKind::Audience, key, step));
                continue;
            }
            let mut want = json!({
                "name": a.name,
                "componentIds": ids.into_iter().flatten().collect::<Vec<i64>>(),
            });
            // As the server keeps them, so an unchanged file is no change.
            let input = upstate_core::audience::AudienceInput {
                name: Some(a.name.clone()),
                component_ids: None,
                emails: a.emails.clone(),
                email_domains: a.email_domains.clone(),
            };
            if let Ok(n) = input.create() {
                if a.emails.is_some() {
                    want["emails"] = json!(n.emails);
                }
                if a.email_domains.is_some() {
                    want["emailDomains"] = json!(n.email_domains);
                }
            }
            r.settle(
                ManagedKind::Audience,
                key,
                current,
                want,
                &format!("/api/v1/statuspages/{page}/audiences"),
                "PUT",
                &format!("/api/v1/statuspages/{page}/audiences/{{id}}"),
                false,
            )
            .await?;
        }
    }
    let channels = r.list("/api/notifications").await?;
    for c in &f.channels {
        let mut want = json!({ "name": c.name, "kind": c.kind, "target": c.target });
        if let Some(t) = &c.token {
            want["token"] = json!(t);
        }
        if let Some(slugs) = &c.pages {
            let ids: Vec<Option<i64>> = slugs.iter().map(|s| page_ids.get(s).copied()).collect();
            if ids.iter().all(Option::is_some) {
                want["pageIds"] = json!(ids.into_iter().flatten().collect::<Vec<i64>>());
            }
        }
        if let Some(k) = &c.event_kinds {
            want["eventKinds"] = json!(k);
        }
        if let Some(e) = c.enabled {
            want["enabled"] = json!(e);
        }
        r.settle(
            ManagedKind::Channel,
            c.name.clone(),
            find(&channels, "name", &json!(c.name)),
            want,
            "/api/notifications",
            "PUT",
            "/api/notifications/{id}",
            false,
        )
        .await?;
    }
    let templates = r.list("/api/incident-templates").await?;
    for (i, t) in f.templates.iter().enumerate() {
        let name = t.name.clone();
        let mut want = raw_map(&setup.raw, &format!("/templates/{i}"));
        want["status"] = json!(t.status.map_or("investigating", |s| s.as_str()));
        want["impact"] = json!(t.impact.map_or("minor", |s| s.as_str()));
        want["message"] = json!(t.message.clone().unwrap_or_default());
        r.settle(
            ManagedKind::Template,
            name.clone(),
            find(&templates, "name", &json!(name)),
            want,
            "/api/incident-templates",
            "PUT",
            "/api/incident-templates/{id}",
            true,
        )
        .await?;
    }
    let integrations = r.list("/api/integrations").await?;
    for x in &f.integrations {
        let page = page_ids.get(&x.page).copied();
        let current = find(&integrations, "name", &json!(x.name));
        let mut rules = Vec::new();
        let mut known = page.is_some();
        for rule in &x.rules {
            let ids: Vec<Option<i64>> = rule
                .components
                .iter()
                .map(|n| {
                    component_ids
                        .get(&(x.page.clone(), n.clone()))
                        .copied()
                        .flatten()
                })
                .collect();
            known &= ids.iter().all(Option::is_some);
            let mut one = json!({
                "when": rule.when,
                "componentIds": ids.into_iter().flatten().collect::<Vec<i64>>(),
                "status": rule.status.as_str(),
                "incident": rule.incident.map_or("draft", |m| m.as_str()),
                "resolve": rule.resolve.unwrap_or(true),
            });
            if let Some(m) = &rule.resolve_message {
                one["resolveMessage"] = json!(m);
            }
            rules.push(one);
        }
        let mut want = json!({ "name": x.name, "rules": rules });
        if let Some(e) = x.enabled {
            want["enabled"] = json!(e);
        }
        if !known {
            // Its page or components are still to be made (a dry run).
            let step = match current {
                None => Step::Create,
                Some(_) => Step::Change {
                    fields: vec!["rules".into()],
                    adopt: false,
                },
            };
            r.steps
                .push((ManagedKind::Integration, x.name.clone(), step));
            continue;
        }
        if current.is_none() {
            want["kind"] = json!(x.kind.as_str());
            want["statusPageId"] = json!(page);
        }
        r.settle(
            ManagedKind::Integration,
            x.name.clone(),
            current,
            want,
            "/api/integrations",
            "PUT",
            "/api/integrations/{id}",
            false,
        )
        .await?;
    }
    if f.settings.is_some() {
        let want = raw_map(&setup.raw, "/settings");
        let current = r.call("GET", "/api/settings", None).await?;
        let fields = differing(&want, &current);
        let adopt = false;
        if fields.is_empty() {
            r.steps.push((
                ManagedKind::Settings,
                "settings".into(),
                Step::Keep { adopt },
            ));
        } else {
            r.steps.push((
                ManagedKind::Settings,
                "settings".into(),
                Step::Change {
                    fields: fields.clone(),
                    adopt,
                },
            ));
            if !dry {
                let mut only = Map::new();
                for f in &fields {
                    only.insert(f.clone(), want[f.as_str()].clone());
                }
                r.call("PUT", "/api/settings", Some(Value::Object(only)))
                    .await?;
            }
        }
    }
    // What it managed and the file no longer declares, children first.
    let mut gone: Vec<ManagedObject> = r
        .managed
        .iter()
        .filter(|m| !r.kept.iter().any(|k| k.kind == m.kind && k.id == m.id))
        .cloned()
        .collect();
    gone.sort_by_key(|m| match m.kind {
        ManagedKind::ThirdParty
        | ManagedKind::Monitor
        | ManagedKind::Viewer
        | ManagedKind::Audience => 0,
        ManagedKind::Component => 1,
        ManagedKind::Group => 2,
        ManagedKind::Page => 3,
        ManagedKind::Integration => 0,
        ManagedKind::Channel
        | ManagedKind::Template
        | ManagedKind::Settings
        | ManagedKind::Access => 4,
    });
    // Inside a page being deleted, its components go with it.
    let pages_gone: Vec<String> = gone
        .iter()
        .filter(|m| m.kind == ManagedKind::Page)
        .map(|m| format!("{}/", m.key))
        .collect();
    for m in gone {
        let path = match m.kind {
            ManagedKind::Page => format!("/api/v1/statuspages/{}", m.id),
            ManagedKind::Group => format!("/api/v1/component-groups/{}", m.id),
            ManagedKind::Component => format!("/api/v1/components/{}", m.id),
            ManagedKind::Monitor => format!("/api/monitors/{}", m.id),
            ManagedKind::ThirdParty => format!("/api/third-party/{}", m.id),
            ManagedKind::Channel => format!("/api/notifications/{}", m.id),
            ManagedKind::Template => format!("/api/incident-templates/{}", m.id),
            ManagedKind::Integration => format!("/api/integrations/{}", m.id),
            // A page's viewers and audiences: under their page.
            ManagedKind::Viewer | ManagedKind::Audience => {
                let slug = m.key.split_once('/').map_or("", |(s, _)| s);
                let Some(page) = find(&pages, "slug", &json!(slug)).and_then(|p| p["id"].as_i64())
                else {
                    continue; // the page is gone, and they with it
                };
                let what = if m.kind == ManagedKind::Viewer {
                    "viewers"
                } else {
                    "audiences"
                };
                format!("/api/v1/statuspages/{page}/{what}/{}", m.id)
            }
            // Never listed: the settings and a page's access are not
            // objects apply makes.
            ManagedKind::Settings | ManagedKind::Access => continue,
        };
        let inside_gone_page =
            m.kind != ManagedKind::Page && pages_gone.iter().any(|p| m.key.starts_with(p));
        r.steps.push((m.kind, m.key.clone(), Step::Delete));
        if r.dry || inside_gone_page {
            continue;
        }
        match r.call("DELETE", &path, None).await {
            Ok(_) => {}
            // Someone deleted it already: what the file wants.
            Err(e) if e.to_string().contains("answered 404") => {}
            Err(e) => return Err(e),
        }
    }
    if !dry {
        let objects = serde_json::to_value(&r.kept)?;
        r.call("PUT", "/api/managed", Some(json!({ "objects": objects })))
            .await?;
    }
    Ok(Outcome {
        steps: r.steps,
        notes: r.notes,
    })
}

/// What a run did (or would do), and what a person must see once.
pub struct Outcome {
    pub steps: Vec<(ManagedKind, String, Step)>,
    pub notes: Vec<String>,
}

/// One line per step that does something, the counts last; and whether
/// anything differs from the file.
pub fn report(steps: &[(ManagedKind, String, Step)], dry: bool) -> (String, bool) {
    let mut out = String::new();
    let (mut make, mut change, mut delete, mut adopt) = (0, 0, 0, 0);
    for (kind, key, step) in steps {
        // "settings" names itself: it has no key.
        let (kind, key) = match kind {
            ManagedKind::Settings => ("settings".to_string(), String::new()),
            k => (k.as_str().replace('_', "-"), format!(" {key}")),
        };
        match step {
            Step::Create => {
                make += 1;
                out.push_str(&format!("+ {kind}{key}\n"));
            }
            Step::Change { fields, adopt: a } => {
                change += 1;
                adopt += usize::from(*a);
                let note = if *a { " (adopted)" } else { "" };
                out.push_str(&format!("~ {kind}{key}: {}{note}\n", fields.join(", ")));
            }
            Step::Keep { adopt: true } => {
                adopt += 1;
                out.push_str(&format!("= {kind}{key} (adopted)\n"));
            }
            Step::Keep { adopt: false } => {}
            Step::Delete => {
                delete += 1;
                out.push_str(&format!("- {kind}{key}\n"));
            }
        }
    }
    let drift = make + change + delete + adopt > 0;
    out.push_str(&if dry {
        format!(
            "Plan: {make} to create, {change} to change, {delete} to delete, {adopt} to adopt.\n"
        )
    } else {
        format!("Applied: {make} created, {change} changed, {delete} deleted, {adopt} adopted.\n")
    });
    (out, drift)
}
