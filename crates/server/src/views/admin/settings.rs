//! `/admin/settings`: the install's settings and its feature switches.

use super::{Frame, Input, bridge, page, step_up_field, step_up_input, when};
use crate::form_bridge::Flash;
use maud::{Markup, html};
use upstate_core::StatusPage;
use upstate_core::settings::{Features, Settings};
use upstate_core::sso::SsoView;
use upstate_core::static_copy::ExportView;
use upstate_store::transfer::Product;

/// What a person reads beside each switch: its name and what turning it
/// off takes away.
fn described(name: &str) -> (&'static str, &'static str) {
    match name {
        "feeds" => (
            "RSS and Atom feeds",
            "Each page's feeds and the links to them.",
        ),
        "calendar" => (
            "Maintenance calendar",
            "The iCalendar of maintenance windows and its link.",
        ),
        "badges" => (
            "Status badges",
            "SVG and shields.io badges for READMEs and dashboards.",
        ),
        "widget" => ("Embeddable widget", "The status widget other sites embed."),
        "liveUpdates" => (
            "Live updates",
            "Open pages refresh themselves when something changes.",
        ),
        "history" => (
            "History pages",
            "Each page's month-by-month history and its link.",
        ),
        "postmortems" => ("Postmortems", "Published postmortems on incident pages."),
        "comments" => (
            "Comments on incidents",
            "Visitors comment on incident pages; moderate them under Comments.",
        ),
        _ => ("", ""),
    }
}

pub fn settings(
    frame: &Frame,
    flash: Option<&Flash>,
    s: &Settings,
    f: &Features,
    pages: &[StatusPage],
    languages: &[(&str, &str)],
    copy: StaticCopy<'_>,
) -> Markup {
    let back = "/admin/settings";
    let chosen = |field: &str, current: Option<&str>| {
        flash
            .and_then(|fl| fl.value_of(field))
            .or(current.map(String::from))
            .unwrap_or_default()
    };
    let default_page = chosen("defaultPage", s.default_page.as_deref());
    let default_language = chosen("defaultLanguage", s.default_language.as_deref());
    let error = |field: &str| flash.and_then(|fl| fl.error_of(field).map(String::from));
    let body = html! {
        header.top { h1 { "Settings" } }
        div.grid {
            section.card aria-labelledby="h-general" {
                h2 #h-general { "General" }
                form method="post" action="/api/settings" {
                    (bridge(back, back, Some("Settings saved."), Some(frame.csrf)))
                    input type="hidden" name="_method" value="PUT";
                    (Input { value: Some(s.site_name.clone()), hint: Some("Shown at the top of this interface."), ..Input::new("siteName", "Name of this install", "text") }.render(flash))
                    div.field.invalid[error("defaultPage").is_some()] {
                        label for="f-defaultPage" { "Page served at /" }
                        select #f-defaultPage name="defaultPage:null" aria-describedby="f-defaultPage-note" {
                            option value="" selected[default_page.is_empty()] { "None (visitors of / are sent to /admin)" }
                            @for p in pages {
                                option value=(p.slug) selected[default_page == p.slug] { (p.name) " (/s/" (p.slug) ")" }
                            }
                        }
                        @if let Some(e) = error("defaultPage") {
                            span.error #f-defaultPage-note { (e) }
                        } @else {
                            span.hint #f-defaultPage-note { "For hosts that are no page's custom domain." }
                        }
                    }
                    div.field.invalid[error("defaultLanguage").is_some()] {
                        label for="f-defaultLanguage" { "Default language of public pages" }
                        select #f-defaultLanguage name="defaultLanguage:null" aria-describedby="f-defaultLanguage-note" {
                            option value="" selected[default_language.is_empty()] { "English" }
                            @for (code, name) in languages.iter().filter(|(c, _)| *c != "en") {
                                option value=(code) selected[default_language == *code] { (name) }
                            }
                        }
                        @if let Some(e) = error("defaultLanguage") {
                            span.error #f-defaultLanguage-note { (e) }
                        } @else {
                            span.hint #f-defaultLanguage-note { "For visitors whose browser asks for no language Upstate speaks." }
                        }
                    }
                    (Input { value: Some(chosen("maintenanceReminders", Some(&s.maintenance_reminders))), hint: Some("How long before a scheduled maintenance window its subscribers are reminded, like 24h, 1h (units m, h, d; empty: no reminders)."), ..Input::new("maintenanceReminders", "Maintenance reminders", "text") }.render(flash))
                    (Input { value: Some(chosen("deliveryLogDays", Some(&s.delivery_log_days.to_string()))), form_name: Some("deliveryLogDays:int"), hint: Some("Days a finished delivery stays in the delivery logs (1 to 3650). Deliveries still being tried are kept until they are settled."), ..Input::new("deliveryLogDays", "Keep the delivery log for (days)", "number") }.render(flash))
                    div.field { div.choices {
                        input type="hidden" name="moderateComments:bool" value="";
                        label { input type="checkbox" name="moderateComments:bool" checked[s.moderate_comments] aria-describedby="f-moderate-note"; "Hold visitors' comments until someone approves them" }
                        span.hint #f-moderate-note { "Off: comments show on the incident's page at once." }
                    } }
                    div { button type="submit" { "Save settings" } }
                }
            }
            section.card aria-labelledby="h-features" {
                h2 #h-features { "Features" }
                p.muted { "A feature turned off is gone everywhere: its address answers 404 and public pages drop their links to it." }
                form method="post" action="/api/features" {
                    (bridge(back, back, Some("Features saved."), Some(frame.csrf)))
                    input type="hidden" name="_method" value="PUT";
                    fieldset {
                        legend { "Offer" }
                        ul.switches {
                            @for (name, on) in f.list() {
                                @let (label, what) = described(name);
                                @let id = format!("feat-{name}");
                                li {
                                    input type="hidden" name=(format!("{name}:bool")) value="";
                                    input type="checkbox" id=(id) name=(format!("{name}:bool")) checked[on] aria-describedby=(format!("{id}-hint"));
                                    label for=(id) { (label) }
                                    span.hint id=(format!("{id}-hint")) { (what) }
                                }
                            }
                        }
                    }
                    div { button type="submit" { "Save features" } }
                }
            }
            (single_sign_on(frame, flash, copy.sso))
            (static_copy(frame, flash, copy.export, copy.root))
            (moving(frame, flash))
        }
    };
    page(frame, "Settings", flash, body)
}

/// The static copy's settings and the folder its directories live under.
pub struct StaticCopy<'a> {
    pub export: &'a ExportView,
    pub root: &'a str,
    pub sso: &'a SsoView,
}

/// Single sign-on for the team: the provider, who may come in, and which
/// role their groups give.
fn single_sign_on(frame: &Frame, flash: Option<&Flash>, s: &SsoView) -> Markup {
    let back = "/admin/settings#sso";
    let flash = flash.and_then(|f| f.of_form("sso"));
    let typed = |field: &str, saved: String| flash.and_then(|f| f.value_of(field)).unwrap_or(saved);
    let on = |field: &str, saved: bool| {
        flash
            .and_then(|f| f.value_of(field))
            .map_or(saved, |v| v == "on")
    };
    let listed = |field: &str, saved: &[String]| {
        flash
            .and_then(|f| f.values_of(field))
            .unwrap_or_else(|| saved.to_vec())
            .join("\n")
    };
    let default_role = typed(
        "defaultRole",
        s.default_role
            .map(|r| r.as_str().to_string())
            .unwrap_or_default(),
    );
    let secret_hint = if s.client_secret_set {
        "Saved, never shown. Leave empty to keep it."
    } else {
        "From the provider's client settings."
    };
    let error = |field: &str| flash.and_then(|fl| fl.error_of(field).map(String::from));
    html! {
        section.card #sso aria-labelledby="h-sso" {
            h2 #h-sso { "Single sign-on" }
            p.muted { "Your team signs in with its OpenID Connect provider (Keycloak, Authentik, Google Workspace, Microsoft Entra, Okta…). The first sign-in makes the account, with the role the person's groups give; at each sign-in the role follows the groups again." }
            div.field {
                label for="sso-redirect" { "Redirect URI to register at the provider" }
                input #sso-redirect type="text" readonly value=(s.redirect_uri) aria-describedby="sso-redirect-hint";
                span.hint #sso-redirect-hint { "The provider sends people back here. Register it as an allowed redirect (callback) URI of the client." }
            }
            form method="post" action="/api/sso-settings" {
                (bridge(back, back, Some("Single sign-on settings saved."), Some(frame.csrf)))
                input type="hidden" name="_method" value="PUT";
                input type="hidden" name="_form" value="sso";
                div.field { div.choices {
                    input type="hidden" name="enabled:bool" value="";
                    label { input type="checkbox" id="f-sso-enabled" name="enabled:bool" checked[on("enabled", s.enabled)]; "Offer single sign-on on the sign-in screen" }
                } }
                @if s.from_configuration {
                    div.field {
                        span.label { "Identity provider" }
                        p { code { (s.issuer) } " · client " code { (s.client_id) } }
                        span.hint { "Set in the server's configuration (sso_issuer, sso_client_id, sso_client_secret): change it there." }
                    }
                } @else {
                (Input { value: Some(typed("issuer", s.issuer.clone())), hint: Some("Such as https://keycloak.example.com/realms/ops, https://accounts.google.com or https://login.microsoftonline.com/TENANT/v2.0."), required: false, ..Input::new("issuer", "Issuer URL", "url") }.render(flash))
                (Input { value: Some(typed("clientId", s.client_id.clone())), required: false, autocomplete: Some("off"), ..Input::new("clientId", "Client id", "text") }.render(flash))
                (Input { form_name: Some("clientSecret:opt"), hint: Some(secret_hint), required: false, autocomplete: Some("new-password"), ..Input::new("clientSecret", "Client secret", "password") }.render(flash))
                }
                (Input { value: Some(typed("buttonLabel", s.button_label.clone())), required: false, hint: Some("The sign-in button's words."), ..Input::new("buttonLabel", "Button", "text") }.render(flash))
                (Input { value: Some(listed("allowedDomains", &s.allowed_domains)), form_name: Some("allowedDomains:lines"), required: false, hint: Some("One per line. Only people with an email of these domains come in; empty: anyone the provider vouches for."), ..Input::new("allowedDomains", "Allowed email domains", "textarea") }.render(flash))
                fieldset {
                    legend { "Roles from groups" }
                    (Input { value: Some(typed("groupsClaim", s.groups_claim.clone())), required: false, hint: Some("The claim of the ID token or user info that lists the person's groups."), ..Input::new("groupsClaim", "Groups claim", "text") }.render(flash))
                    (Input { value: Some(listed("adminGroups", &s.admin_groups)), form_name: Some("adminGroups:lines"), required: false, hint: Some("One per line, as the provider spells them."), ..Input::new("adminGroups", "Admin groups", "textarea") }.render(flash))
                    (Input { value: Some(listed("editorGroups", &s.editor_groups)), form_name: Some("editorGroups:lines"), required: false, ..Input::new("editorGroups", "Editor groups", "textarea") }.render(flash))
                    (Input { value: Some(listed("viewerGroups", &s.viewer_groups)), form_name: Some("viewerGroups:lines"), required: false, ..Input::new("viewerGroups", "Viewer groups", "textarea") }.render(flash))
                    div.field.invalid[error("defaultRole").is_some()] {
                        label for="f-defaultRole" { "Everyone else" }
                        select #f-defaultRole name="defaultRole:opt" aria-describedby="f-defaultRole-note" {
                            option value="" selected[default_role.is_empty()] { "Refused" }
                            @for r in ["viewer", "editor", "admin"] {
                                option value=(r) selected[default_role == r] { "Comes in as " (r) }
                            }
                        }
                        @if let Some(e) = error("defaultRole") {
                            span.error #f-defaultRole-note { (e) }
                        } @else {
                            span.hint #f-defaultRole-note { "Someone in none of the groups above. The highest role of a person's groups wins; single sign-on never makes an owner." }
                        }
                    }
                }
                div.field { div.choices {
                    input type="hidden" name="ssoOnly:bool" value="";
                    label { input type="checkbox" name="ssoOnly:bool" checked[on("ssoOnly", s.sso_only)] aria-describedby="f-ssoOnly-note"; "Single sign-on only" }
                    @if let Some(e) = error("ssoOnly") {
                        span.error #f-ssoOnly-note { (e) }
                    } @else {
                        span.hint #f-ssoOnly-note { "Passwords stop opening sessions, except an owner's: the way back in when the provider is down." }
                    }
                } }
                div { button type="submit" { "Save single sign-on" } }
            }
            @if !s.issuer.is_empty() {
                form method="post" action="/api/sso-settings/check" {
                    (bridge(back, back, Some("The provider answers: its discovery document reads."), Some(frame.csrf)))
                    input type="hidden" name="_form" value="sso";
                    button.secondary type="submit" { "Check the provider" }
                }
            }
        }
    }
}

/// Where the static copy is published, and how the last publish went.
fn static_copy(frame: &Frame, flash: Option<&Flash>, e: &ExportView, root: &str) -> Markup {
    let back = "/admin/settings";
    let st = &e.status;
    let s3 = e.s3.as_ref();
    // A refused form comes back as it was sent, the box included.
    let flash = flash.and_then(|f| f.of_form("static-copy"));
    let enabled = flash
        .and_then(|f| f.value_of("enabled"))
        .map_or(e.enabled, |v| v == "on");
    let dir_hint = format!(
        "A folder under {root} (the server's static_copy_root), such as status. Point a web server at it."
    );
    let secret_hint = if s3.is_some() {
        "Saved, never shown. Leave empty to keep it."
    } else {
        "Needed with a new access key."
    };
    html! {
        section.card #static-copy aria-labelledby="h-static" {
            h2 #h-static { "Static copy" }
            p.muted { "Every public page, as visitors and integrations read it, written after each change to a folder or an S3-compatible bucket: a static host serves it when this service or its database is down. The command " code { "upstate export-static --out DIR" } " writes the same copy once." }
            @if e.enabled {
                @if let Some(err) = &st.last_error {
                    div.alert.error role="alert" #static-state {
                        strong { "Publishing fails. " }
                        (err)
                        @if let Some(at) = st.last_attempt_at { " (" (when(at)) ", retried by itself)" }
                    }
                } @else if let Some(at) = st.last_published_at {
                    div.alert.notice role="status" #static-state {
                        "Published " (when(at)) ": " (st.files) " files, " (st.written) " written, " (st.removed) " removed."
                    }
                } @else {
                    div.alert.notice role="status" #static-state { "Not published yet: the first copy is made within seconds." }
                }
            }
            form method="post" action="/api/export-settings" {
                (bridge(back, back, Some("Static copy settings saved."), Some(frame.csrf)))
                input type="hidden" name="_method" value="PUT";
                input type="hidden" name="_form" value="static-copy";
                div.field { div.choices {
                    input type="hidden" name="enabled:bool" value="";
                    label { input type="checkbox" name="enabled:bool" checked[enabled] aria-describedby="f-enabled-note"; "Publish after every change" }
                    @if let Some(err) = flash.and_then(|f| f.error_of("enabled")) {
                        span.error #f-enabled-note { (err) }
                    } @else {
                        span.hint #f-enabled-note { "Within seconds of a change, and every five minutes." }
                    }
                } }
                (Input { value: e.directory.clone(), form_name: Some("directory:opt"), hint: Some(&dir_hint), required: false, ..Input::new("directory", "Folder", "text") }.render(flash))
                fieldset {
                    legend { "S3-compatible bucket" }
                    (Input { value: s3.and_then(|s| s.endpoint.clone()), form_name: Some("s3.endpoint:opt"), hint: Some("Leave empty for AWS; the URL of MinIO, Ceph, R2 or another service."), required: false, ..Input::new("s3.endpoint", "Endpoint", "url") }.render(flash))
                    (Input { value: s3.map(|s| s.bucket.clone()), form_name: Some("s3.bucket:req"), hint: Some("Leave empty for no bucket."), required: false, ..Input::new("s3.bucket", "Bucket", "text") }.render(flash))
                    (Input { value: s3.map(|s| s.prefix.clone()), form_name: Some("s3.prefix:opt"), hint: Some("Put before every key, such as status/ (empty: the bucket's root)."), required: false, ..Input::new("s3.prefix", "Key prefix", "text") }.render(flash))
                    (Input { value: s3.map(|s| s.region.clone()), form_name: Some("s3.region:opt"), hint: Some("Default us-east-1."), required: false, ..Input::new("s3.region", "Region", "text") }.render(flash))
                    (Input { value: s3.map(|s| s.access_key_id.clone()), form_name: Some("s3.accessKeyId"), required: false, autocomplete: Some("off"), ..Input::new("s3.accessKeyId", "Access key id", "text") }.render(flash))
                    (Input { form_name: Some("s3.secretAccessKey:opt"), hint: Some(secret_hint), required: false, autocomplete: Some("new-password"), ..Input::new("s3.secretAccessKey", "Secret access key", "password") }.render(flash))
                }
                div { button type="submit" { "Save static copy" } }
            }
        }
    }
}

/// Export and import of the whole install (`/api/admin/export`).
fn moving(frame: &Frame, flash: Option<&Flash>) -> Markup {
    let back = "/admin/settings#moving";
    let export_flash = flash.and_then(|f| f.of_form("export"));
    let import_flash = flash.and_then(|f| f.of_form("import"));
    // A refused document names the place inside it (`/tables/…`).
    let wrong: Vec<&(String, String)> = import_flash
        .map(|f| {
            f.fields
                .iter()
                .filter(|(field, _)| field.starts_with('/') || field == "body")
                .collect()
        })
        .unwrap_or_default();
    // What the import's answer said to do by hand, kept for this page.
    let kept = |key: &str| -> Vec<String> {
        flash
            .and_then(|f| f.values.get(key))
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|n| n.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let notes = kept("notes");
    let left_out = kept("leftOut");
    html! {
        section.card #moving aria-labelledby="h-moving" {
            h2 #h-moving { "Move in and out" }
            p.muted { "The whole install as one JSON document: pages, components and their history, incidents, maintenance, postmortems, subscribers, channels, monitors, the team and settings. The commands " code { "upstate export" } " and " code { "upstate import" } " do the same from a shell." }
            @if !notes.is_empty() {
                div.alert.notice role="status" #import-notes {
                    strong { "Imported. To do by hand:" }
                    ul { @for n in &notes { li { (n) } } }
                }
            }
            form method="post" action="/api/admin/export" {
                (bridge(back, back, None, Some(frame.csrf)))
                input type="hidden" name="_method" value="GET";
                input type="hidden" name="_form" value="export";
                h3 { "Export" }
                div.field { div.choices {
                    input type="hidden" name="secrets:bool" value="";
                    label { input type="checkbox" name="secrets:bool" aria-describedby="f-secrets-note"; "Include secrets" }
                    span.hint #f-secrets-note { "Channel signing secrets, two-factor seeds, the push key and monitor header values, in clear. Without them, they read <withheld>." }
                    input type="hidden" name="passwords:bool" value="";
                    label { input type="checkbox" name="passwords:bool" aria-describedby="f-passwords-note"; "Include password hashes" }
                    span.hint #f-passwords-note { "So the team signs in with the same passwords after a move; API keys keep working." }
                } }
                (step_up_input(frame, "export", "to download the export", export_flash, Some("Confirms it is you: the copy holds every account and subscriber.")))
                div { button type="submit" { "Download export" } }
            }
            form method="post" action="/api/admin/export" enctype="multipart/form-data" {
                (bridge(back, back, Some("Imported."), Some(frame.csrf)))
                input type="hidden" name="_form" value="import";
                input type="hidden" name="_keep" value="notes";
                h3 { "Import" }
                div.field.invalid[!wrong.is_empty()] {
                    label for="f-document" { "File" }
                    input #f-document type="file" name="_body:json" accept=".json,application/json,.db,.sqlite,application/vnd.sqlite3" required
                        aria-invalid=[(!wrong.is_empty()).then_some("true")] aria-describedby="f-document-note";
                    @if wrong.is_empty() {
                        span.hint #f-document-note { "A file Download export or upstate export wrote, or another product's as What it is says (up to 32 MB here; larger ones with upstate import). All or nothing: a file that does not fit changes nothing." }
                    } @else {
                        span.error #f-document-note {
                            @for (field, message) in &wrong {
                                @if field.as_str() == "body" { (message) } @else { "At " code { (field) } ": " (message) }
                                " "
                            }
                        }
                    }
                }
                div.field {
                    label for="f-from" { "What it is" }
                    select #f-from name="source" aria-describedby="f-from-note" {
                        option value="upstate" { "An Upstate export" }
                        option value="uptime_kuma" { "Uptime Kuma: its backup (JSON) or its database (kuma.db)" }
                    }
                    span.hint #f-from-note { "Uptime Kuma's monitors become components watched by monitors of the same kind, target and interval, beside the pages here. Its database file (kuma.db) brings its status pages, maintenance and incidents too; one larger than 32 MB (heartbeats grow it) goes through upstate import --from uptime-kuma kuma.db." }
                }
                div.field {
                    label for="f-mode" { "Into" }
                    select #f-mode name="mode" aria-describedby="f-mode-note" {
                        option value="empty" { "An install with no pages yet: everything" }
                        option value="add_pages" { "Beside the pages here: its pages only" }
                    }
                    span.hint #f-mode-note { "Everything keeps its ids, and accounts already here are matched by email. Pages added beside others get new ids; the team, keys, channels and settings stay as they are." }
                }
                (step_up_field(frame, "import", "to import", import_flash))
                div { button type="submit" { "Import" } }
            }
            h3 { "From another status page" }
            p.muted { "Components, incidents with every update, maintenance and the components' history come in as a page beside the ones here; imported again, only what is new. Requests keep to the outgoing rule. From a shell: " code { "upstate import --from statuspage|instatus|cachet" } "." }
            @if !left_out.is_empty() {
                div.alert.notice role="status" #statuspage-notes {
                    strong { "Not brought:" }
                    ul { @for n in &left_out { li { (n) } } }
                }
            }
            (product_form(frame, back, flash, Product::Statuspage))
            (product_form(frame, back, flash, Product::Instatus))
            (product_form(frame, back, flash, Product::Cachet))
        }
    }
}

/// One product's import form: the address, and the key where its API
/// takes one. Statuspage's is open (the one most people leave).
fn product_form(frame: &Frame, back: &str, flash: Option<&Flash>, product: Product) -> Markup {
    let form = product.as_str();
    let mine = flash.and_then(|f| f.of_form(form));
    // The form just sent stays open, with its answer or its errors.
    let sent = flash.and_then(|f| f.form.as_deref()) == Some(form);
    let (title, url_label, url_hint, key_hint) = match product {
        Product::Statuspage => (
            "Atlassian Statuspage",
            "Page address",
            "Such as https://status.example.com: its public JSON. With a management API key, the API's address, https://api.statuspage.io/v1.",
            "Optional. A management API key (Statuspage: your avatar, API info) brings the subscribers too, and reads a private page.",
        ),
        Product::Instatus => (
            "Instatus",
            "API address",
            "https://api.instatus.com, unless you reach Instatus through a proxy.",
            "An API key of the page's team (Instatus: User settings, Developer settings).",
        ),
        Product::Cachet => (
            "Cachet",
            "Cachet address",
            "Such as https://status.example.com (Cachet 2 or 3).",
            "Optional: Cachet's public API needs none.",
        ),
    };
    let url_id = format!("f-{form}-url");
    let key_id = format!("f-{form}-key");
    let page_id = format!("f-{form}-page");
    html! {
        details.import-from open[product == Product::Statuspage || sent] {
            summary { "From " (title) }
            form method="post" action={ "/api/admin/import/" (form) } {
                (bridge(back, back, Some(&format!("The {} page was imported.", product.title())), Some(frame.csrf)))
                input type="hidden" name="_form" value=(form);
                input type="hidden" name="_keep" value="leftOut";
                (Input {
                    hint: Some(url_hint),
                    id: Some(&url_id),
                    form_name: (product == Product::Instatus).then_some("url:opt"),
                    required: product != Product::Instatus,
                    value: (product == Product::Instatus).then(|| "https://api.instatus.com".to_string()),
                    ..Input::new("url", url_label, "url")
                }.render(mine))
                (Input {
                    hint: Some(key_hint),
                    id: Some(&key_id),
                    form_name: Some("apiKey:opt"),
                    required: product == Product::Instatus,
                    autocomplete: Some("off"),
                    ..Input::new("apiKey", "API key", "password")
                }.render(mine))
                @if product != Product::Cachet {
                    (Input {
                        hint: Some("Only when the key reads several pages: the page's id."),
                        id: Some(&page_id),
                        form_name: Some("pageId:opt"),
                        required: false,
                        ..Input::new("pageId", "Page id", "text")
                    }.render(mine))
                }
                div { button type="submit" { "Bring the page" } }
            }
        }
    }
}
