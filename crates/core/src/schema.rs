//! What each rule in `validate` accepts, said as JSON Schema for the API
//! document (fields point here with `#[schema(schema_with = ...)]`), so a
//! client or a fuzzer that writes what the document allows is never refused
//! for the shape of a field. Each schema is at most as wide as its rule:
//! a value it allows, the rule accepts (`tests/api/contract.rs` holds the
//! server to that with schemathesis's `positive_data_acceptance`).

use crate::validate::{
    CUSTOM_CSS_MAX, DESCRIPTION_MAX, DOMAIN_MAX, MESSAGE_MAX, NAME_MAX, PAST_INCIDENT_DAYS_MAX,
    SLUG_MAX, UPTIME_DAYS_MAX, URL_MAX,
};
use utoipa::openapi::schema::{
    ArrayBuilder, KnownFormat, ObjectBuilder, SchemaFormat, SchemaType, Type,
};
use utoipa::openapi::{Object, RefOr, Schema};

/// An http(s) URL on a public name, as `url` writes it (anchors aside).
/// The host is a domain name, an IPv4 address or `localhost`, and the
/// port any from 1 to 65535: the addresses `validate::url` takes that a
/// local S3 server or a webhook receiver on a LAN has. (An IPv6 literal is
/// taken by the server too, and left out here: a subset keeps every
/// address the document allows one the server takes.)
const URL_BODY: &str = concat!(
    r"https?://(",
    r"([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,12}",
    r"|((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])",
    r"|localhost)",
    r"(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?",
    r"(/[A-Za-z0-9._~!$&'()*+,;=:@/-]*)?(\?[A-Za-z0-9._~!$&'()*+,;=:@/?-]*)?"
);

/// No control character (what `validate::name` refuses).
const LINE: &str = r"[^\u0000-\u001f\u007f-\u009f]";
/// No control character but tab and line breaks (`validate::text`).
const TEXT: &str = r"[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]";

fn string(min: usize, max: usize, pattern: Option<String>) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(min))
        .max_length(Some(max))
        .pattern(pattern)
}

/// Text of at most `max` characters with something to read in it (not only
/// blanks), line breaks allowed: `validate::text` plus "must not be empty".
fn readable(max: usize) -> ObjectBuilder {
    string(
        1,
        max,
        Some(format!(r"^{TEXT}*[^\s\u0000-\u001f\u007f-\u009f]{TEXT}*$")),
    )
}

fn integer(min: i64, max: i64) -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .minimum(Some(min as f64))
        .maximum(Some(max as f64))
        .build()
}

/// A name or title (`validate::name`): one line with something to read.
pub fn name() -> Object {
    string(
        1,
        NAME_MAX,
        Some(format!(r"^{LINE}*[^\s\u0000-\u001f\u007f-\u009f]{LINE}*$")),
    )
    .examples([serde_json::json!("API")])
    .build()
}

/// Free text such as a description (`validate::text` with `DESCRIPTION_MAX`).
pub fn description() -> Object {
    string(0, DESCRIPTION_MAX, Some(format!("^{TEXT}*$"))).build()
}

/// A timeline message (`validate::message`): Markdown, something to read.
pub fn message() -> Object {
    readable(MESSAGE_MAX)
        .examples([serde_json::json!(
            "We are looking into slow answers from the API."
        )])
        .build()
}

/// A closing or resolving message, which may be left empty.
pub fn optional_message() -> Object {
    string(0, MESSAGE_MAX, Some(format!("^{TEXT}*$"))).build()
}

/// A page's stylesheet (`validate::custom_css`).
pub fn custom_css() -> Object {
    // Bytes, not characters, are counted: a quarter of the limit in
    // characters stays under it whatever they are.
    string(0, CUSTOM_CSS_MAX / 4, Some(format!("^{TEXT}*$"))).build()
}

/// A page's address segment (`validate::slug`).
pub fn slug() -> Object {
    string(
        1,
        SLUG_MAX,
        Some(format!(
            "^[a-z0-9]([a-z0-9-]{{0,{}}}[a-z0-9])?$",
            SLUG_MAX - 2
        )),
    )
    .examples([serde_json::json!("acme")])
    .build()
}

/// An absolute http(s) URL (`validate::url`).
pub fn url() -> Object {
    string(10, URL_MAX, Some(format!("^{URL_BODY}$")))
        .examples([serde_json::json!("https://example.com/logo.png")])
        .build()
}

/// A host name (`validate::domain`).
pub fn domain() -> Object {
    string(
        3,
        DOMAIN_MAX,
        Some(r"^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$".into()),
    )
    .examples([serde_json::json!("status.example.com")])
    .build()
}

/// `#rgb` or `#rrggbb` (`validate::hex_color`).
pub fn hex_color() -> Object {
    string(4, 7, Some("^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$".into()))
        .examples([serde_json::json!("#2563eb")])
        .build()
}

/// An IANA time zone name (`validate::time_zone`): the ones both bundled
/// databases know, listed.
pub fn time_zone() -> Object {
    let mut names: Vec<String> = jiff::tz::db()
        .available()
        .map(|n| n.as_str().to_string())
        .filter(|n| crate::validate::known_zone(n))
        .collect();
    names.sort();
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(names))
        .examples([serde_json::json!("Europe/Berlin")])
        .build()
}

/// An RFC 3339 date-time, as `Timestamp` parses it.
pub fn timestamp() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
        .examples([serde_json::json!("2026-01-31T14:00:00Z")])
        .build()
}

/// `schema` or `null` (for a field whose `null` clears it).
/// `schema` (of type `ty`) or `null`, saying what `null` does.
fn or_null(mut schema: Object, ty: Type) -> Object {
    schema.schema_type = SchemaType::from_iter([ty, Type::Null]);
    schema.description = Some(NULL_REMOVES.into());
    if let Some(values) = schema.enum_values.as_mut() {
        values.push(serde_json::Value::Null);
    }
    schema
}

/// Said of every field whose `null` means something (it removes the value).
/// The document's request bodies keep `null` only where this is said: for
/// any other optional field `null` reads as left out, and the document
/// shows just the values (see `openapi::strict_bodies` in the server).
pub const NULL_REMOVES: &str = "`null` removes it.";

/// A URL, or `null` to remove it.
pub fn url_or_null() -> Object {
    or_null(url(), Type::String)
}

/// A host name, or `null` to remove it.
pub fn domain_or_null() -> Object {
    or_null(domain(), Type::String)
}

/// A page's slug, or `null` for none.
pub fn slug_or_null() -> Object {
    or_null(slug(), Type::String)
}

/// A time zone, or `null` for the page's (a recurring window's own zone).
pub fn time_zone_or_null() -> Object {
    or_null(time_zone(), Type::String)
}

/// A language, or `null` for the visitor's own.
pub fn lang_or_null() -> Object {
    or_null(lang(), Type::String)
}

/// When maintenance reminders go out (`settings::reminder_minutes`): up to
/// three durations before a window, like `24h, 1h`; empty for none.
pub fn reminders() -> Object {
    string(
        0,
        40,
        Some("^((1|2|6|12|24|48)h(, (1|2|6|12|24|48)h){0,2})?$".into()),
    )
    .examples([serde_json::json!("24h, 1h")])
    .build()
}

/// How long delivery records are kept (`settings::DELIVERY_LOG_DAYS_MAX`).
pub fn delivery_log_days() -> Object {
    integer(1, crate::settings::DELIVERY_LOG_DAYS_MAX)
}

/// A group's id, or `null` for no group.
pub fn id_or_null() -> Object {
    or_null(id(), Type::Integer)
}

/// When a maintenance window begins: a timestamp.
pub fn window_start() -> Object {
    timestamp()
}

/// When a maintenance window ends: a timestamp after its start (shown with
/// an example two hours after `window_start`'s).
pub fn window_end() -> Object {
    ObjectBuilder::from(timestamp())
        .examples([serde_json::json!("2026-01-31T16:00:00Z")])
        .build()
}

/// An email address (`roles::email`), in the plain form most have.
pub fn email() -> Object {
    string(
        6,
        254,
        Some(r"^[a-z0-9._+-]{1,64}@[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?(\.[a-z]{2,12}){1,3}$".into()),
    )
    .examples([serde_json::json!("ops@example.com")])
    .build()
}

/// A new account password (`roles::password`): 12 to 128 characters.
pub fn new_password() -> Object {
    string(12, 128, Some(r"^[^\u0000]*$".into())).build()
}

/// A password or token being presented: any text.
pub fn secret() -> Object {
    string(1, 1024, Some(r"^[^\u0000]*$".into())).build()
}

/// One of the languages the pages speak.
pub fn lang() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(crate::i18n::LANGS.iter().map(|l| l.code())))
        .build()
}

/// A recipient's language: a dictionary's code, or empty for the install's
/// default (`notify::recipient_lang`).
pub fn lang_or_default() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(
            std::iter::once("").chain(crate::i18n::LANGS.iter().map(|l| l.code())),
        ))
        .build()
}

/// An RRULE (`recurring::rule`). The server takes any RFC 5545 rule that
/// repeats daily or less often; the document lists the common shapes.
pub fn rrule() -> Object {
    string(
        10,
        500,
        Some("^FREQ=(DAILY|WEEKLY|MONTHLY|YEARLY)(;INTERVAL=[1-9])?(;BYDAY=(MO|TU|WE|TH|FR|SA|SU))?$".into()),
    )
    .description(Some(
        "An RFC 5545 RRULE that repeats daily or less often, without DTSTART, e.g. FREQ=WEEKLY;BYDAY=SU",
    ))
    .examples([serde_json::json!("FREQ=WEEKLY;BYDAY=SU")])
    .build()
}

/// How a recurring window repeats, as picked (`recurring::picked_rule`).
pub fn repeat() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(["daily", "weekly", "monthly", "rule"]))
        .build()
}

/// Days of the week for `repeat: weekly`.
pub fn weekdays() -> RefOr<Schema> {
    ArrayBuilder::new()
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(crate::recurring::WEEKDAYS.iter().map(|(c, _)| *c))),
        )
        .max_items(Some(7))
        .into()
}

/// The day of the month for `repeat: monthly`.
pub fn month_day() -> Object {
    integer(1, 31)
}

/// A wall-clock start in the page's time zone (`recurring::local_start`).
pub fn local_start() -> Object {
    string(
        16,
        19,
        Some("^20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$".into()),
    )
    .examples([serde_json::json!("2026-11-29T02:00")])
    .build()
}

/// How long each window lasts (`recurring::DURATION_MIN..=DURATION_MAX`).
pub fn duration_minutes() -> Object {
    integer(
        crate::recurring::DURATION_MIN,
        crate::recurring::DURATION_MAX,
    )
}

/// How many days ahead windows are made (`recurring::HORIZON_MAX`).
pub fn horizon_days() -> Object {
    integer(1, crate::recurring::HORIZON_MAX)
}

/// A visitor's comment (`comments::BODY_MAX`), something to read.
pub fn comment_body() -> Object {
    readable(crate::comments::BODY_MAX).build()
}

/// A commenter's name (`comments::AUTHOR_MAX`), one line.
pub fn comment_author() -> Object {
    string(0, crate::comments::AUTHOR_MAX, Some(format!("^{LINE}*$"))).build()
}

/// A postmortem (`postmortem::BODY_MAX`), Markdown, something to read.
pub fn postmortem() -> Object {
    readable(crate::postmortem::BODY_MAX).build()
}

/// A quick link's label (`links::LABEL_MAX`), something to read.
pub fn link_label() -> Object {
    readable(crate::links::LABEL_MAX)
        .examples([serde_json::json!("Documentation")])
        .build()
}

/// A resource id: a positive integer.
pub fn id() -> Object {
    integer(1, i64::MAX)
}

/// A list of resource ids.
pub fn ids() -> RefOr<Schema> {
    ArrayBuilder::new().items(id()).max_items(Some(1000)).into()
}

/// A display position (`validate::order`).
pub fn order() -> Object {
    integer(0, 1_000_000)
}

/// Days of uptime a page shows (`validate::uptime_days`).
pub fn uptime_days() -> Object {
    integer(1, UPTIME_DAYS_MAX)
}

/// Days of past incidents a page lists (`validate::past_incident_days`).
pub fn past_incident_days() -> Object {
    integer(0, PAST_INCIDENT_DAYS_MAX)
}

/// A folder of the static copy under the copy root (`static_copy::folder`):
/// names of letters, digits, `-`, `_` and `.` (none only dots) joined by `/`.
pub fn export_folder() -> Object {
    string(
        1,
        256,
        Some(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*/?$".to_string()),
    )
    .examples([serde_json::json!("status")])
    .build()
}

/// An S3 bucket's name (`static_copy::bucket`).
pub fn bucket() -> Object {
    string(
        3,
        63,
        Some(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$".to_string()),
    )
    .examples([serde_json::json!("status-copy")])
    .build()
}

/// A key prefix in a bucket, `status/` (empty: the bucket's root).
pub fn key_prefix() -> Object {
    string(
        0,
        256,
        Some(r"^([A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*/?)?$".to_string()),
    )
    .examples([serde_json::json!("status/")])
    .build()
}

/// A region, key id or secret: one word of printable characters.
pub fn credential() -> Object {
    string(1, 256, Some(r"^[!-~]+$".to_string()))
        .examples([serde_json::json!("us-east-1")])
        .build()
}

/// The components a rule moves: at least one, each once
/// (`alerts::Rule::check`).
pub fn rule_component_ids() -> RefOr<Schema> {
    ArrayBuilder::new()
        .items(id())
        .min_items(Some(1))
        .max_items(Some(1000))
        .unique_items(true)
        .into()
}

/// Where an integration's rule moves components: an outage or a slowdown,
/// never operational or maintenance (`alerts::Rule::check`).
pub fn alert_status() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(["degraded", "partial_outage", "major_outage"]))
        .build()
}

/// A poll interval of a third-party component (`third_party::INTERVAL_*`).
pub fn follow_interval() -> Object {
    integer(
        crate::third_party::INTERVAL_MIN_S,
        crate::third_party::INTERVAL_MAX_S,
    )
}

/// A vendor component's id or name (`third_party`): one line.
pub fn vendor_component() -> Object {
    string(0, 200, Some(format!("^{LINE}*$"))).build()
}

/// An http(s) URL, or empty for none.
pub fn url_or_empty() -> Object {
    string(0, URL_MAX, Some(format!("^$|^{URL_BODY}$"))).build()
}

/// How a setup file names a managed object (`acme/API`).
pub fn managed_key() -> Object {
    string(1, crate::setup::MANAGED_KEY_MAX, Some(format!("^{LINE}+$"))).build()
}

/// A sender's signing secret: one line (`alerts::SECRET_MAX`).
pub fn signing_secret() -> Object {
    string(0, crate::alerts::SECRET_MAX, Some(format!("^{LINE}*$"))).build()
}

/// A client id, or empty for none (`sso::SsoInput`).
pub fn credential_or_empty() -> Object {
    string(0, 256, Some(r"^[!-~]*$".to_string())).build()
}

/// A claim's name: one word of printable characters.
pub fn claim() -> Object {
    string(1, 256, Some(r"^[!-~]+$".to_string()))
        .examples([serde_json::json!("groups")])
        .build()
}

/// A page's allowed networks (`access::PageAccessInput`): IPv4 or IPv6
/// addresses, each with an optional prefix length, at most 100.
pub fn networks() -> RefOr<Schema> {
    const V4: &str = r"((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(/([0-9]|[12][0-9]|3[0-2]))?";
    const H: &str = "[0-9a-fA-F]{1,4}";
    let v6 = [
        format!("({H}:){{7}}{H}"),
        format!("({H}:){{1,7}}:"),
        format!("({H}:){{1,6}}:{H}"),
        format!("({H}:){{1,5}}(:{H}){{1,2}}"),
        format!("({H}:){{1,4}}(:{H}){{1,3}}"),
        format!("({H}:){{1,3}}(:{H}){{1,4}}"),
        format!("({H}:){{1,2}}(:{H}){{1,5}}"),
        format!("{H}:((:{H}){{1,6}})"),
        format!(":((:{H}){{1,7}}|:)"),
    ]
    .join("|");
    let v6 = format!("({v6})(/([0-9]|[1-9][0-9]|1[01][0-9]|12[0-8]))?");
    ArrayBuilder::new()
        .items(
            string(2, 43, Some(format!("^({V4}|{v6})$")))
                .examples([serde_json::json!("203.0.113.0/24")]),
        )
        .max_items(Some(crate::access::NETWORKS_MAX))
        .into()
}

/// Email domains (`sso::SsoInput`): host names, at most 50.
pub fn domains() -> RefOr<Schema> {
    ArrayBuilder::new()
        .items(domain())
        .max_items(Some(50))
        .into()
}

/// Group names as the identity provider spells them: at most 50.
pub fn group_names() -> RefOr<Schema> {
    ArrayBuilder::new()
        .items(
            string(
                1,
                256,
                Some(format!(r"^{LINE}*[^\s\u0000-\u001f\u007f-\u009f]{LINE}*$")),
            )
            .build(),
        )
        .max_items(Some(50))
        .into()
}

/// The role single sign-on gives someone in no mapped group.
pub fn sso_role() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(["admin", "editor", "viewer"]))
        .build()
}

/// Viewers' email addresses (`audience::AudienceInput`).
pub fn emails() -> RefOr<Schema> {
    ArrayBuilder::new()
        .items(
            ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::Type::String)
                .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                    utoipa::openapi::KnownFormat::Email,
                )))
                .max_length(Some(254)),
        )
        .max_items(Some(crate::audience::MEMBERS_MAX))
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate;

    /// The examples each schema shows are values its rule accepts.
    #[test]
    fn examples_pass_their_rules() {
        assert!(validate::name("API").is_ok());
        assert!(validate::slug("acme").is_ok());
        assert!(validate::url("https://example.com/logo.png").is_ok());
        assert!(validate::domain("status.example.com").is_ok());
        assert!(validate::hex_color("#2563eb").is_ok());
        assert!(validate::time_zone("Europe/Berlin").is_ok());
        assert!(time_zone().enum_values.is_some_and(|v| v.len() > 300));
        assert_eq!(
            validate::DESCRIPTION_MAX,
            description().max_length.unwrap_or(0)
        );
    }

    /// The URL pattern takes what the server takes (IP hosts, any port)
    /// and nothing it refuses.
    #[test]
    fn the_url_pattern_agrees_with_the_rule() {
        let Ok(pattern) = regex::Regex::new(&format!("^{URL_BODY}$")) else {
            panic!("the URL pattern is a regular expression")
        };
        for ok in [
            "https://example.com/logo.png",
            "http://127.0.0.1:9000/bucket",
            "http://10.0.0.7:65535",
            "http://localhost:8080/hook?x=1",
            "https://s3.eu-central-1.amazonaws.com:443",
        ] {
            assert!(pattern.is_match(ok), "{ok}");
            assert!(validate::url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://a.com:65536",
            "http://256.1.1.1",
            "ftp://a.com",
            "http://a b.com",
        ] {
            assert!(!pattern.is_match(bad), "{bad}");
        }
        assert!(validate::url("http://a.com:65536").is_err());
    }
}
