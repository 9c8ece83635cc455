//! `GET /api/feed/rss?page={slug}[&format=atom]`: a page's incidents and its
//! maintenance (scheduled, ongoing and recently finished), each with its updates, as RSS 2.0 (or
//! Atom). Built with the rss and atom_syndication crates and served from the
//! page's snapshot like every public body (ETag, 304, compression, CORS).

use crate::error::ApiError;
use crate::extract::QueryParams;
use crate::openapi::{BadQuery, PublicErrors};
use crate::public_reads::{limited, offered, public, queried_page, serve_page};
use crate::snapshot::Body;
use crate::state::AppState;
use crate::visitor::Visitor;
use axum::extract::State;
use axum::response::Response;
use time::format_description::well_known::Rfc2822;
use upstate_core::{FieldErrors, Timestamp};
use upstate_store::public::PageData;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(limited(
        state,
        routes!(feed),
        state.settings.public_limits.page,
    ))
}

/// How many completed or cancelled maintenance windows a feed keeps.
const FINISHED_LISTED: usize = 50;

/// One feed entry: an incident or a maintenance window with its timeline.
struct Entry {
    id: String,
    title: String,
    link: String,
    updated: Timestamp,
    /// HTML (readers render an RSS description and an Atom `html` summary
    /// as HTML): every message is rendered and cleaned as on the page, so
    /// typed markup arrives as text.
    html: String,
}

/// A timeline as HTML: one paragraph per update, newest first.
fn timeline(lines: Vec<(Timestamp, String, &str)>) -> String {
    lines
        .into_iter()
        .map(|(at, status, msg)| {
            maud::html! {
                p { small { (at.to_rfc3339()) " · " strong { (status) } } }
                (crate::views::message_markdown(msg))
            }
            .into_string()
        })
        .collect()
}

fn entries(d: &PageData, base: &str) -> Vec<Entry> {
    let page = format!("{base}/s/{}", d.page.slug);
    let mut out: Vec<Entry> = d
        .incidents
        .iter()
        .map(|i| Entry {
            id: format!("{page}/incidents/{}", i.id),
            title: format!("{} ({}, impact {})", i.title, i.status, i.impact),
            link: format!("{page}/incidents/{}", i.id),
            updated: i
                .updates
                .first()
                .map(|u| u.created_at)
                .unwrap_or(i.created_at),
            html: timeline(
                i.updates
                    .iter()
                    .map(|u| (u.created_at, u.status.to_string(), u.message.as_str()))
                    .collect(),
            ),
        })
        .collect();
    // Finished windows stay (their last update says how they ended), the
    // latest `FINISHED_LISTED`, so a reader that polls late still sees them.
    let finished = d.past_maintenance.iter().take(FINISHED_LISTED);
    out.extend(d.maintenance.iter().chain(finished).map(|m| {
        Entry {
            id: format!("{page}/maintenance/{}", m.id),
            title: format!(
                "Maintenance: {} ({}, {} to {})",
                m.title,
                m.status,
                m.scheduled_start_time.to_rfc3339(),
                m.scheduled_end_time.to_rfc3339()
            ),
            link: format!("{page}/maintenance/{}", m.id),
            updated: m
                .updates
                .first()
                .map(|u| u.created_at)
                .unwrap_or(m.created_at),
            html: timeline(
                m.updates
                    .iter()
                    .map(|u| (u.created_at, u.status.to_string(), u.message.as_str()))
                    .collect(),
            ),
        }
    }));
    // A published postmortem is news of its own: the Markdown as written.
    out.extend(d.postmortems.iter().map(|p| Entry {
        id: format!("{page}/incidents/{}#postmortem", p.incident),
        title: format!("Postmortem: {}", p.title),
        link: format!("{page}/incidents/{}", p.incident),
        updated: p.published_at,
        html: crate::views::markdown(&p.body).into_string(),
    }));
    out.sort_by_key(|e| std::cmp::Reverse(e.updated));
    out
}

fn rss(d: &PageData, base: &str) -> Body {
    let items: Vec<rss::Item> = entries(d, base)
        .into_iter()
        .map(|e| {
            rss::ItemBuilder::default()
                .title(Some(e.title))
                .link(Some(e.link))
                .guid(Some(
                    rss::GuidBuilder::default()
                        .value(e.id)
                        .permalink(false)
                        .build(),
                ))
                .pub_date(e.updated.to_datetime().format(&Rfc2822).ok())
                .description(Some(e.html))
                .build()
        })
        .collect();
    // Where this feed itself lives (`atom:link rel="self"`), as feed
    // validators and some readers want it.
    let myself = rss::extension::atom::Link {
        href: feed_url(base, &d.page.slug, "rss"),
        rel: "self".into(),
        mime_type: Some("application/rss+xml".into()),
        ..Default::default()
    };
    let channel = rss::ChannelBuilder::default()
        .title(format!("{} status", d.page.name))
        .link(format!("{base}/s/{}", d.page.slug))
        .atom_ext(Some(rss::extension::atom::AtomExtension {
            links: vec![myself],
        }))
        .description(format!("Incidents and maintenance of {}", d.page.name))
        .last_build_date(d.updated_at.to_datetime().format(&Rfc2822).ok())
        .items(items)
        .build();
    Body::typed(
        channel.to_string().into_bytes(),
        "application/rss+xml; charset=utf-8",
    )
}

/// A feed's own address, as `/api/feed/rss` serves it.
fn feed_url(base: &str, slug: &str, format: &str) -> String {
    let slug: String = form_urlencoded::byte_serialize(slug.as_bytes()).collect();
    match format {
        "atom" => format!("{base}/api/feed/rss?page={slug}&format=atom"),
        _ => format!("{base}/api/feed/rss?page={slug}"),
    }
}

fn atom_time(t: Timestamp) -> atom_syndication::FixedDateTime {
    atom_syndication::FixedDateTime::parse_from_rfc3339(&t.to_rfc3339()).unwrap_or_default()
}

fn atom(d: &PageData, base: &str) -> Body {
    let page = format!("{base}/s/{}", d.page.slug);
    let link = |href: String| atom_syndication::LinkBuilder::default().href(href).build();
    let entries: Vec<atom_syndication::Entry> = entries(d, base)
        .into_iter()
        .map(|e| {
            atom_syndication::EntryBuilder::default()
                .id(e.id)
                .title(e.title)
                .updated(atom_time(e.updated))
                .links(vec![link(e.link)])
                .summary(Some(atom_syndication::Text::html(e.html)))
                .build()
        })
        .collect();
    // RFC 4287 wants an author on every entry, or one on the feed: the page.
    let author = atom_syndication::PersonBuilder::default()
        .name(d.page.name.clone())
        .uri(Some(page.clone()))
        .build();
    let feed = atom_syndication::FeedBuilder::default()
        .id(page.clone())
        .title(format!("{} status", d.page.name))
        .authors(vec![author])
        .updated(atom_time(d.updated_at))
        .links(vec![
            link(page),
            atom_syndication::LinkBuilder::default()
                .href(feed_url(base, &d.page.slug, "atom"))
                .rel("self")
                .mime_type(Some("application/atom+xml".into()))
                .build(),
        ])
        .entries(entries)
        .build();
    Body::typed(
        feed.to_string().into_bytes(),
        "application/atom+xml; charset=utf-8",
    )
}

#[utoipa::path(
    get,
    path = "/api/feed/rss",
    tag = "feeds",
    operation_id = "feed",
    summary = "A page's incidents and maintenance as RSS 2.0, or Atom with format=atom",
    params(("page" = String, Query, description = "The page's slug"), ("format" = Option<String>, Query, description = "rss (default) or atom")),
    responses((status = 200, description = "The feed: RSS 2.0, or Atom with format=atom",
        content(("application/rss+xml"), ("application/atom+xml"))), PublicErrors, BadQuery)
)]
async fn feed(State(state): State<AppState>, q: QueryParams, headers: Visitor) -> Response {
    public(
        async {
            let mut e = FieldErrors::new();
            let atom_format = q.one_of("format", &["rss", "atom"], &mut e) == "atom";
            let snap = queried_page(&state, &q, &headers, e).await?;
            offered(snap.data.features.feeds, "feeds")?;
            let base = state.settings.public_url.clone();
            let body = if atom_format {
                snap.body("feed:atom", |d| Ok(atom(d, &base)))?
            } else {
                snap.body("feed:rss", |d| Ok(rss(d, &base)))?
            };
            Ok::<_, ApiError>(serve_page(&snap, &headers, &body))
        }
        .await,
    )
}
