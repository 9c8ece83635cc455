//! What each kind of channel receives for a notice: the request's URL,
//! headers and JSON body. Pure, so every shape is tested without a network.
//!
//! Webhooks follow Standard Webhooks (standardwebhooks.com): the body is
//! `{type, timestamp, data}`, and `webhook-id` / `webhook-timestamp` /
//! `webhook-signature` let the receiver check the sender and drop repeats
//! (the id is the delivery's, the same on every retry). Slack, Discord,
//! Teams and Telegram get their own message formats, with the operator's
//! text escaped for each (none of them may turn it into markup or pings).

use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use upstate_core::notify::{ChannelKind, Notice};

/// One request to make.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

/// Where a channel's request goes and with which credentials.
pub struct Target<'a> {
    pub kind: ChannelKind,
    /// The URL, or Telegram's chat id.
    pub target: &'a str,
    /// The webhook signing secret, or Telegram's bot token.
    pub secret: Option<&'a str>,
    /// Telegram's API base (tests point it at a local server).
    pub telegram_api: &'a str,
}

/// The Standard Webhooks signature of `body`: `v1,` and the base64 HMAC-SHA256
/// of `{id}.{timestamp}.{body}` keyed with the secret's decoded bytes.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String, String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let key = b64
        .decode(secret.strip_prefix("whsec_").unwrap_or(secret))
        .map_err(|_| "the signing secret is damaged; rotate it".to_string())?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|e| e.to_string())?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Ok(format!("v1,{}", b64.encode(mac.finalize().into_bytes())))
}

/// A colour per state: red for outages, orange for partial trouble, blue
/// for maintenance, green for recovery.
fn colour(n: &Notice) -> u32 {
    match n.state.as_str() {
        "major_outage" => 0xd92d20,
        "partial_outage" | "degraded" => 0xf79009,
        "maintenance" | "scheduled" | "in_progress" => 0x2e90fa,
        "operational" | "resolved" | "completed" => 0x12b76a,
        _ => match n.impact.as_deref() {
            Some("critical" | "major") => 0xd92d20,
            Some("minor") => 0xf79009,
            _ => 0x667085,
        },
    }
}

fn components_line(n: &Notice) -> String {
    n.components
        .iter()
        .map(|c| {
            format!(
                "{}: {}",
                c.name,
                crate::notices::component_label(crate::notices::lang_of(n), c.status)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The webhook body: what integrations parse, so it names everything.
pub fn webhook_body(n: &Notice) -> Value {
    json!({
        "type": n.kind,
        "timestamp": n.at,
        "data": {
            "page": { "id": n.page_id, "name": n.page_name, "slug": n.page_slug },
            "subject": { "type": n.subject, "id": n.subject_id, "status": n.state, "impact": n.impact },
            "title": n.title,
            "text": n.text,
            "url": n.url,
            "components": n.components,
        }
    })
}

/// `<`, `>` and `&` as Slack wants them escaped in mrkdwn.
fn slack_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn html_escape(s: &str) -> String {
    slack_escape(s).replace('"', "&quot;")
}

/// Markdown characters Discord would interpret, and its mass mentions.
fn discord_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        if matches!(
            ch,
            '*' | '_' | '~' | '`' | '|' | '>' | '#' | '[' | ']' | '(' | ')' | '\\' | '@'
        ) {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn slack_body(n: &Notice) -> Value {
    let mut text = format!("*<{}|{}>*", n.url, slack_escape(&n.title));
    if !n.text.is_empty() {
        text.push('\n');
        text.push_str(&slack_escape(&cut(&n.text, 2500)));
    }
    let mut context = slack_escape(&n.page_name);
    if !n.components.is_empty() {
        context.push_str(" · ");
        context.push_str(&slack_escape(&components_line(n)));
    }
    json!({
        "text": slack_escape(&format!("{}: {}", n.page_name, n.title)),
        "blocks": [
            { "type": "section", "text": { "type": "mrkdwn", "text": text } },
            { "type": "context", "elements": [ { "type": "mrkdwn", "text": cut(&context, 2900) } ] }
        ],
        "unfurl_links": false
    })
}

fn discord_body(n: &Notice) -> Value {
    let mut fields = Vec::new();
    if !n.components.is_empty() {
        fields.push(json!({ "name": "Components", "value": cut(&discord_escape(&components_line(n)), 1024) }));
    }
    json!({
        "username": cut(&n.page_name, 80),
        "allowed_mentions": { "parse": [] },
        "embeds": [{
            "title": cut(&n.title, 256),
            "url": n.url,
            "description": cut(&discord_escape(&n.text), 4000),
            "color": colour(n),
            "fields": fields,
            "timestamp": n.at,
            "footer": { "text": cut(&n.page_name, 2048) }
        }]
    })
}

fn teams_body(n: &Notice) -> Value {
    let mut body = vec![
        json!({ "type": "TextBlock", "text": n.title, "weight": "Bolder", "size": "Medium", "wrap": true }),
    ];
    if !n.text.is_empty() {
        body.push(json!({ "type": "TextBlock", "text": cut(&n.text, 4000), "wrap": true }));
    }
    if !n.components.is_empty() {
        body.push(json!({ "type": "TextBlock", "text": components_line(n), "isSubtle": true, "wrap": true }));
    }
    json!({
        "type": "message",
        "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive",
            "content": {
                "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                "type": "AdaptiveCard",
                "version": "1.4",
                "body": body,
                "actions": [ { "type": "Action.OpenUrl", "title": format!("Open {}", n.page_name), "url": n.url } ]
            }
        }]
    })
}

fn telegram_body(chat: &str, n: &Notice) -> Value {
    let mut text = format!("<b>{}</b>", html_escape(&n.title));
    if !n.text.is_empty() {
        text.push('\n');
        text.push_str(&html_escape(&cut(&n.text, 3000)));
    }
    if !n.components.is_empty() {
        text.push_str("\n<i>");
        text.push_str(&html_escape(&components_line(n)));
        text.push_str("</i>");
    }
    text.push_str(&format!(
        "\n<a href=\"{}\">{}</a>",
        html_escape(&n.url),
        html_escape(&n.page_name)
    ));
    let chat: Value = chat
        .parse::<i64>()
        .map(Value::from)
        .unwrap_or_else(|_| Value::from(chat));
    json!({ "chat_id": chat, "text": text, "parse_mode": "HTML", "link_preview_options": { "is_disabled": true } })
}

/// The request for one delivery. `id` is the delivery's stable id.
pub fn request(t: &Target<'_>, n: &Notice, id: &str, now_secs: i64) -> Result<Request, String> {
    let body_of = |v: Value| serde_json::to_vec(&v).map_err(|e| e.to_string());
    match t.kind {
        ChannelKind::Webhook => {
            let body = body_of(webhook_body(n))?;
            let mut headers = vec![
                ("webhook-id", id.to_string()),
                ("webhook-timestamp", now_secs.to_string()),
            ];
            // Team channels always sign; a visitor's webhook subscription
            // has no secret to share, so it goes unsigned (as Statuspage's).
            if let Some(secret) = t.secret {
                headers.push(("webhook-signature", sign(secret, id, now_secs, &body)?));
            }
            Ok(Request {
                url: t.target.to_string(),
                headers,
                body,
            })
        }
        ChannelKind::Slack => Ok(Request {
            url: t.target.to_string(),
            headers: vec![],
            body: body_of(slack_body(n))?,
        }),
        ChannelKind::Discord => Ok(Request {
            url: t.target.to_string(),
            headers: vec![],
            body: body_of(discord_body(n))?,
        }),
        ChannelKind::Teams => Ok(Request {
            url: t.target.to_string(),
            headers: vec![],
            body: body_of(teams_body(n))?,
        }),
        ChannelKind::Push => Err("push messages are made per subscription (crate::push)".into()),
        ChannelKind::Telegram => {
            let token = t.secret.ok_or("the Telegram channel has no bot token")?;
            Ok(Request {
                url: format!(
                    "{}/bot{token}/sendMessage",
                    t.telegram_api.trim_end_matches('/')
                ),
                headers: vec![],
                body: body_of(telegram_body(t.target, n))?,
            })
        }
        ChannelKind::Email => Err("email channels are sent by the mailer, not over HTTP".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use upstate_core::notify::NoticeComponent;
    use upstate_core::{ComponentStatus, Timestamp};

    type R = Result<(), Box<dyn std::error::Error>>;

    fn notice() -> Notice {
        Notice {
            kind: "incident.created".into(),
            page_id: 1,
            page_name: "Acme <Status>".into(),
            page_slug: "acme".into(),
            title: "Investigating: API errors".into(),
            text: "point DNS to <your-lb-host> & @everyone *now*".into(),
            url: "https://status.example.com/s/acme/incidents/3".into(),
            components: vec![NoticeComponent {
                id: 7,
                name: "API".into(),
                status: ComponentStatus::MajorOutage,
            }],
            subject: "incident".into(),
            subject_id: 3,
            state: "investigating".into(),
            impact: Some("major".into()),
            at: Timestamp::from_millis(1_700_000_000_000),
            lang: String::new(),
        }
    }

    /// The example of the Standard Webhooks specification's test vectors.
    #[test]
    fn signatures_match_the_standard_webhooks_reference() -> R {
        let sig = sign(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            br#"{"test": 2432232314}"#,
        )?;
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        Ok(())
    }

    #[test]
    fn each_kind_escapes_the_operator_text_its_own_way() -> R {
        let n = notice();
        let t = |kind| Target {
            kind,
            target: "https://hooks.example.com/x",
            secret: Some("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
            telegram_api: "https://api.telegram.org",
        };
        let slack: Value =
            serde_json::from_slice(&request(&t(ChannelKind::Slack), &n, "msg_1", 0)?.body)?;
        let text = slack["blocks"][0]["text"]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.contains("&lt;your-lb-host&gt; &amp;"), "{text}");
        // The fallback text (what the phone's notification shows) too: a
        // title like `<!channel>` or `<https://evil|click>` stays text.
        let mut hostile = notice();
        hostile.title = "<!channel> see <https://evil.example|click>".into();
        let slack: Value =
            serde_json::from_slice(&request(&t(ChannelKind::Slack), &hostile, "msg_1", 0)?.body)?;
        let fallback = slack["text"].as_str().unwrap_or_default();
        assert!(
            !fallback.contains('<') && !fallback.contains('>'),
            "{fallback}"
        );
        assert!(fallback.contains("&lt;!channel&gt;"), "{fallback}");
        let discord: Value =
            serde_json::from_slice(&request(&t(ChannelKind::Discord), &n, "msg_1", 0)?.body)?;
        assert_eq!(discord["allowed_mentions"]["parse"], json!([]));
        let d = discord["embeds"][0]["description"]
            .as_str()
            .unwrap_or_default();
        assert!(d.contains("\\@everyone \\*now\\*"), "{d}");
        let hook = request(&t(ChannelKind::Webhook), &n, "msg_1", 1)?;
        let names: Vec<&str> = hook.headers.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            names,
            ["webhook-id", "webhook-timestamp", "webhook-signature"]
        );
        let body: Value = serde_json::from_slice(&hook.body)?;
        assert_eq!(body["data"]["text"], n.text, "webhooks carry the raw text");
        let tg = Target {
            kind: ChannelKind::Telegram,
            target: "-100123",
            secret: Some("123:abc"),
            telegram_api: "http://127.0.0.1:9/",
        };
        let req = request(&tg, &n, "msg_1", 0)?;
        assert_eq!(req.url, "http://127.0.0.1:9/bot123:abc/sendMessage");
        let body: Value = serde_json::from_slice(&req.body)?;
        assert_eq!(body["chat_id"], -100123);
        assert!(
            body["text"]
                .as_str()
                .unwrap_or_default()
                .contains("&lt;your-lb-host&gt;")
        );
        Ok(())
    }
}
