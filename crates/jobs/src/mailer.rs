//! Email: one SMTP relay (lettre) configured by `smtp_url`, and the message
//! a notice becomes: a plain-text and an HTML part made from the same
//! notice, the page's name as the sender's display name, a `Message-ID`
//! that stays the same on every retry of one delivery (so a mail client
//! shows a repeat once), and `Date` set when sent.
//!
//! `smtp_url` picks the security (and a relay without TLS is reached over
//! connections of our own, `plain_relay`): `smtps://user:pass@host:465` (TLS),
//! `smtp://user:pass@host:587?tls=required` (STARTTLS, refused if the
//! server cannot), `smtp://host:25` (plain, for a relay on the same host or
//! network).
//!
//! A mailer may instead keep its mail in memory (`KeptMail`): the tests
//! that read what a message says take it from there, while a few tests
//! send through a real SMTP server to prove the wire.

use crate::plain_relay::{Failed, PlainRelay};
use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::PoolConfig;
use lettre::transport::smtp::response::Response;
use lettre::transport::stub::AsyncStubTransport;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use maud::{DOCTYPE, html};
use std::time::Duration;
use upstate_core::notify::Notice;

/// A configured relay and the address mail comes from.
#[derive(Clone)]
pub struct Mailer {
    transport: Relay,
    from: Mailbox,
    /// The domain of `Message-ID`s.
    domain: String,
    /// One per pooled connection.
    turns: std::sync::Arc<tokio::sync::Semaphore>,
    timeout: Duration,
}

#[derive(Clone)]
enum Relay {
    /// Behind TLS: lettre's pool.
    Smtp(AsyncSmtpTransport<Tokio1Executor>),
    /// Without TLS: connections of our own, with `TCP_NODELAY`.
    Plain(std::sync::Arc<PlainRelay>),
    Kept(KeptMail),
}

/// Mail a mailer keeps instead of sending: each message as it would have
/// gone on the wire. Clones share what was kept.
#[derive(Clone)]
pub struct KeptMail(AsyncStubTransport);

impl Default for KeptMail {
    fn default() -> Self {
        KeptMail(AsyncStubTransport::new_ok())
    }
}

impl std::fmt::Debug for KeptMail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeptMail")
    }
}

/// One kept message: the envelope's sender and recipients, and the
/// message's bytes.
#[derive(Debug, Clone)]
pub struct KeptMessage {
    pub from: Option<String>,
    pub to: Vec<String>,
    pub raw: String,
}

impl KeptMail {
    /// Every message kept so far, oldest first.
    pub async fn messages(&self) -> Vec<KeptMessage> {
        self.0
            .messages()
            .await
            .into_iter()
            .map(|(envelope, raw)| KeptMessage {
                from: envelope.from().map(|a| a.to_string()),
                to: envelope.to().iter().map(|a| a.to_string()).collect(),
                raw,
            })
            .collect()
    }
}

/// SMTP connections kept open to the relay, and so mails sent at once.
const CONNECTIONS: usize = 100;

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer")
            .field("from", &self.from.to_string())
            .finish()
    }
}

/// What the relay said to one message.
#[derive(Debug, Clone, PartialEq)]
pub struct Accepted {
    pub code: u16,
    pub text: String,
}

/// One message to send: who gets it and, for subscribers, where they
/// leave with one click (RFC 8058).
pub struct Letter<'a> {
    pub to: &'a str,
    pub notice: &'a Notice,
    /// The delivery's stable id (`msg_<n>`).
    pub id: &'a str,
    pub unsubscribe: Option<&'a str>,
    /// A subscriber's page to change which components they hear of.
    pub manage: Option<&'a str>,
}

impl Mailer {
    /// Opens a connection to the relay and greets it (the self-test).
    pub async fn reachable(&self) -> Result<(), String> {
        let transport = match &self.transport {
            Relay::Smtp(transport) => transport,
            Relay::Plain(relay) => return relay.reachable().await,
            Relay::Kept(_) => return Ok(()),
        };
        match tokio::time::timeout(self.timeout, transport.test_connection()).await {
            Ok(Ok(true)) => Ok(()),
            Ok(Ok(false)) => Err("the relay did not answer as SMTP".into()),
            Ok(Err(e)) => Err(format!("cannot reach the relay: {e}")),
            Err(_) => Err(format!("no answer within {} s", self.timeout.as_secs())),
        }
    }

    /// From `smtp_url` and `smtp_from` (`"Status <status@example.com>"`).
    pub fn new(url: &str, from: &str, timeout: Duration) -> Result<Mailer, String> {
        if let Some(relay) = PlainRelay::from_url(url, timeout) {
            return Self::with(Relay::Plain(std::sync::Arc::new(relay)), from, timeout);
        }
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| format!("smtp_url is not usable: {e}"))?
            .timeout(Some(timeout))
            .pool_config(PoolConfig::new().max_size(CONNECTIONS as u32))
            .build();
        Self::with(Relay::Smtp(transport), from, timeout)
    }

    /// A mailer that keeps its mail in `kept` instead of sending it.
    pub fn keeping(kept: KeptMail, from: &str, timeout: Duration) -> Result<Mailer, String> {
        Self::with(Relay::Kept(kept), from, timeout)
    }

    fn with(transport: Relay, from: &str, timeout: Duration) -> Result<Mailer, String> {
        let from: Mailbox = from
            .parse()
            .map_err(|e| format!("smtp_from {from:?} is not an address: {e}"))?;
        let domain = from.email.domain().to_string();
        Ok(Mailer {
            transport,
            from,
            domain,
            turns: std::sync::Arc::new(tokio::sync::Semaphore::new(CONNECTIONS)),
            timeout,
        })
    }

    /// The message of one delivery.
    pub fn message(&self, l: &Letter<'_>) -> Result<Message, String> {
        let n = l.notice;
        let to: Mailbox =
            l.to.parse()
                .map_err(|e| format!("bad address {:?}: {e}", l.to))?;
        let from = Mailbox::new(Some(n.page_name.clone()), self.from.email.clone());
        let mut b = Message::builder()
            .from(from)
            .reply_to(self.from.clone())
            .to(to)
            .subject(format!("[{}] {}", n.page_name, n.title))
            .message_id(Some(format!("<upstate.{}@{}>", l.id, self.domain)))
            .date_now();
        if let Some(url) = l.unsubscribe {
            b = b
                .raw_header(HeaderValue::new(
                    HeaderName::new_from_ascii_str("List-Unsubscribe"),
                    format!("<{url}>"),
                ))
                .raw_header(HeaderValue::new(
                    HeaderName::new_from_ascii_str("List-Unsubscribe-Post"),
                    "List-Unsubscribe=One-Click".into(),
                ));
        }
        b.multipart(MultiPart::alternative_plain_html(text(l), page(l)))
            .map_err(|e| format!("cannot build the message: {e}"))
    }

    pub async fn send(&self, l: &Letter<'_>) -> Result<Accepted, crate::outgoing::Failure> {
        let message = self
            .message(l)
            .map_err(crate::outgoing::Failure::permanent)?;
        // As many sends as pooled connections: a batch of hundreds queues
        // here rather than inside the pool, and each send's whole time is
        // bounded, so one stuck connection cannot hold the sender.
        let Ok(_turn) = self.turns.acquire().await else {
            return Err(crate::outgoing::Failure {
                permanent: false,
                reason: "the mailer is shutting down".into(),
            });
        };
        let transport = match &self.transport {
            Relay::Smtp(transport) => transport,
            Relay::Plain(relay) => {
                let sent = tokio::time::timeout(self.timeout * 3, relay.send(&message)).await;
                return match sent {
                    Ok(Ok(r)) => Ok(accepted(&r)),
                    Ok(Err(Failed::Smtp(e))) => Err(refused(&e)),
                    Ok(Err(Failed::Unreachable(why))) => Err(crate::outgoing::Failure {
                        permanent: false,
                        reason: format!("cannot reach the mail server: {why}"),
                    }),
                    Err(_) => Err(late()),
                };
            }
            Relay::Kept(kept) => {
                return match kept.0.send(message).await {
                    Ok(()) => Ok(Accepted {
                        code: 250,
                        text: "kept".into(),
                    }),
                    Err(e) => Err(crate::outgoing::Failure::permanent(e.to_string())),
                };
            }
        };
        let sent = tokio::time::timeout(self.timeout * 3, transport.send(message)).await;
        let Ok(sent) = sent else {
            return Err(late());
        };
        match sent {
            Ok(r) => Ok(accepted(&r)),
            Err(e) => Err(refused(&e)),
        }
    }
}

fn accepted(r: &Response) -> Accepted {
    Accepted {
        code: u16::from(r.code()),
        text: r.message().collect::<Vec<_>>().join(" "),
    }
}

fn refused(e: &lettre::transport::smtp::Error) -> crate::outgoing::Failure {
    crate::outgoing::Failure {
        // A 5xx refusal of this address stays refused.
        permanent: e.is_permanent(),
        reason: format!("the mail server refused or failed: {e}"),
    }
}

fn late() -> crate::outgoing::Failure {
    crate::outgoing::Failure {
        permanent: false,
        reason: "the mail server did not answer in time".into(),
    }
}

fn components_lines(n: &Notice) -> Vec<String> {
    n.components
        .iter()
        .map(|c| {
            format!(
                "{}: {}",
                c.name,
                crate::notices::component_label(crate::notices::lang_of(n), c.status)
            )
        })
        .collect()
}

/// The plain-text part: what every mail client can show.
fn text(l: &Letter<'_>) -> String {
    let n = l.notice;
    let mut out = format!("{}\n\n", n.title);
    if !n.text.is_empty() {
        out.push_str(&n.text);
        out.push_str("\n\n");
    }
    for line in components_lines(n) {
        out.push_str(&format!("- {line}\n"));
    }
    let lang = crate::notices::lang_of(n);
    let label = match n.kind.as_str() {
        "confirm" => lang.t("msg.confirm"),
        "sign_in" => lang.t("msg.sign_in"),
        _ => lang.t("msg.details"),
    };
    out.push_str(&format!("\n{label}: {}\n", n.url));
    if let Some(m) = l.manage {
        out.push_str(&format!("\n{}: {m}\n", lang.t("msg.choose")));
    }
    if let Some(u) = l.unsubscribe {
        out.push_str(&format!("{}: {u}\n", lang.t("msg.unsubscribe")));
    }
    out
}

/// The HTML part, escaped by construction; the operator's words keep their
/// line breaks.
fn page(l: &Letter<'_>) -> String {
    let n = l.notice;
    let lang = crate::notices::lang_of(n);
    html! {
        (DOCTYPE)
        html lang=(lang.code()) {
            head { meta charset="utf-8"; title { (n.title) } }
            body style="margin:0;padding:24px;background:#f6f7f9;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1c2430" {
                div style="max-width:560px;margin:0 auto;background:#fff;border:1px solid #e2e6ec;border-radius:8px;padding:24px" {
                    p style="margin:0 0 8px;color:#5b6678;font-size:14px" { (n.page_name) }
                    h1 style="margin:0 0 16px;font-size:20px" { (n.title) }
                    @for para in n.text.split("\n\n").filter(|p| !p.trim().is_empty()) {
                        p style="margin:0 0 12px;line-height:1.5" {
                            @for (i, line) in para.lines().enumerate() {
                                @if i > 0 { br; }
                                (line)
                            }
                        }
                    }
                    @if !n.components.is_empty() {
                        ul style="margin:0 0 16px;padding-left:20px;color:#5b6678" {
                            @for line in components_lines(n) { li { (line) } }
                        }
                    }
                    p style="margin:16px 0 0" {
                        a href=(n.url) style="display:inline-block;background:#2563eb;color:#fff;padding:8px 16px;border-radius:6px;text-decoration:none;font-weight:600" {
                            @match n.kind.as_str() {
                                "confirm" => (lang.t("msg.confirm_button")),
                                "sign_in" => (lang.t("msg.sign_in")),
                                _ => (lang.t("msg.view")),
                            }
                        }
                    }
                }
                @if let Some(u) = l.unsubscribe {
                    p style="max-width:560px;margin:12px auto 0;color:#5b6678;font-size:12px;text-align:center" {
                        (lang.t("msg.because").replace("{page}", &n.page_name)) " "
                        @if let Some(m) = l.manage {
                            a href=(m) style="color:#5b6678" { (lang.t("msg.choose")) }
                            " · "
                        }
                        a href=(u) style="color:#5b6678" { (lang.t("msg.unsubscribe")) }
                    }
                }
            }
        }
    }
    .into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notice(lang: &str) -> Notice {
        Notice {
            kind: "incident.created".into(),
            page_id: 1,
            page_name: "Acme".into(),
            page_slug: "acme".into(),
            title: "t".into(),
            text: "words".into(),
            url: "https://status.example/s/acme/incidents/1".into(),
            components: vec![upstate_core::notify::NoticeComponent {
                id: 1,
                name: "API".into(),
                status: upstate_core::ComponentStatus::MajorOutage,
            }],
            subject: "incident".into(),
            subject_id: 1,
            state: "investigating".into(),
            impact: None,
            at: upstate_core::Timestamp::from_millis(0),
            lang: lang.into(),
        }
    }

    #[test]
    fn both_parts_speak_the_notices_language() {
        let de = notice("de");
        let l = Letter {
            to: "a@example.com",
            notice: &de,
            id: "msg_1",
            unsubscribe: Some("https://x/u"),
            manage: Some("https://x/m"),
        };
        let plain = text(&l);
        assert!(plain.contains("- API: Schwerer Ausfall"), "{plain}");
        assert!(plain.contains("Abbestellen: https://x/u"), "{plain}");
        assert!(plain.contains("Details: https://status.example"), "{plain}");
        let html = page(&l);
        assert!(html.contains("lang=\"de\""));
        assert!(html.contains("Sie erhalten diese Nachricht, weil Sie Acme abonniert haben."));
        assert!(html.contains("Auf der Statusseite ansehen"));
        // Notices stored before translation read as English, unchanged.
        let old = notice("");
        let l = Letter { notice: &old, ..l };
        assert!(text(&l).contains("- API: Major outage"));
        assert!(page(&l).contains("You get this because you subscribed to Acme."));
    }
}
