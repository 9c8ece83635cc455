//! `GET /api/public/status/{slug}/events`: a server-sent event stream per
//! page, read from the change events of the outbox (this instance's commits,
//! and other instances' through PostgreSQL notifications). It sends a
//! `status` event at once; after every committed change of the page, one
//! `change` event per change event (`{"kind": "incident.created", ...}`) and
//! then a `status` event. `status` carries the snapshot version and the
//! overall status; the page's script fetches the fresh HTML when the version
//! moves.

use crate::error::ApiError;
use crate::openapi::PublicErrors;
use crate::public_reads::{limited, offered, page, public};
use crate::snapshot::Snapshot;
use crate::state::AppState;
use crate::visitor::Visitor;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, Stream, StreamExt};
use serde::Serialize;
use std::convert::Infallible;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use upstate_core::events::Event as Change;
use upstate_core::public::{overall_status, status_label};
use upstate_core::{ComponentStatus, Timestamp};
use upstate_store::changes::Heard;
use utoipa_axum::{router::OpenApiRouter, routes};

/// How soon a browser reconnects when its stream ends with this instance
/// stopping.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(limited(
        state,
        routes!(events),
        state.settings.public_limits.page,
    ))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusEvent {
    /// Moves whenever anything on the page changed.
    version: u64,
    status: ComponentStatus,
    status_label: &'static str,
    last_updated: Timestamp,
}

/// One event of the stream, as an event-stream parser hands it over.
#[derive(Serialize, utoipa::ToSchema)]
#[allow(
    dead_code,
    reason = "describes the stream to the document; never built"
)]
struct StreamEvent {
    /// `status` or `change`.
    event: StreamEventKind,
    /// JSON text: for `status`, the page's version, status, its label and
    /// when it last changed (`{"version", "status", "statusLabel",
    /// "lastUpdated"}`); for `change`, one change event named by `kind`.
    data: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
#[allow(
    dead_code,
    reason = "describes the stream to the document; never built"
)]
enum StreamEventKind {
    Status,
    Change,
}

fn status_event(snap: &Snapshot) -> Event {
    let d = &snap.data;
    let status = overall_status(&d.components, &d.incidents);
    let body = StatusEvent {
        version: snap.version,
        status,
        status_label: status_label(status),
        last_updated: d.updated_at,
    };
    Event::default()
        .event("status")
        .json_data(body)
        .unwrap_or_else(|_| Event::default().comment("unserializable"))
}

#[utoipa::path(
    get,
    path = "/api/public/status/{slug}/events",
    tag = "public",
    operation_id = "publicEvents",
    summary = "Server-sent events: a `status` event now; after every change of the page, its `change` events and a `status` event",
    description = "Each `change` event's data is one change event of the page as JSON, named by `kind`: `page.updated`, `component.created`, `component.updated`, `component.status_changed` (with `from` and `to`), `component.deleted`, `group.created`, `group.updated`, `group.deleted`, `incident.created`, `incident.updated` (with `status` and `impact`), `incident.resolved`, `incident.deleted`, `maintenance.scheduled`, `maintenance.updated`, `maintenance.started`, `maintenance.completed`, `maintenance.cancelled`, `maintenance.deleted`, `quick_links.changed`, `layout.changed`, `settings.changed` (install-wide settings or feature switches). The stream ends when the page is deleted or stops being visible, or live updates are turned off.",
    params(("slug" = String, Path, description = "The page's slug")),
    responses((status = 200, description = "text/event-stream of `status` and `change` events", body = StreamEvent, content_type = "text/event-stream"), PublicErrors)
)]
async fn events(
    State(state): State<AppState>,
    Path(slug): Path<String>,
    headers: Visitor,
) -> Response {
    public(
        async {
            // Subscribe before reading the snapshot: a change in between is
            // then an event, not a gap.
            let changes = state.db.changes.subscribe();
            let snap = page(&state, &slug, &headers).await?;
            offered(snap.data.features.live_updates, "live updates")?;
            let first = stream::once(std::future::ready(Ok::<_, Infallible>(status_event(&snap))));
            let rest = follow(state.clone(), slug, snap.page_id, headers.clone(), changes);
            let stopping = state.settings.stopping.clone();
            // Ended by this instance stopping (a restart, an upgrade): the
            // last event tells the browser to reconnect soon, which the load
            // balancer sends to an instance still serving.
            let farewell = stream::once(std::future::ready(())).filter_map({
                let stopping = stopping.clone();
                move |()| {
                    std::future::ready(stopping.is_cancelled().then(|| {
                        Ok(Event::default()
                            .retry(RECONNECT_AFTER)
                            .comment("this instance is stopping: reconnect"))
                    }))
                }
            });
            let stream = first
                .chain(rest)
                .take_until(stopping.cancelled_owned())
                .chain(farewell);
            let mut res = Sse::new(stream)
                .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
                .into_response();
            res.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            res.headers_mut()
                .insert("x-accel-buffering", HeaderValue::from_static("no"));
            Ok::<_, ApiError>(res)
        }
        .await,
    )
}

/// The change events of each commit that touched this page, then its status
/// (a lagging receiver or a lost notification connection: the status only).
fn follow(
    state: AppState,
    slug: String,
    page_id: i64,
    visitor: Visitor,
    changes: tokio::sync::broadcast::Receiver<Heard>,
) -> impl Stream<Item = Result<Event, Infallible>> {
    stream::unfold((state, slug, changes), move |(state, slug, mut changes)| {
        let visitor = visitor.clone();
        async move {
            loop {
                let ours: Vec<Change> = match changes.recv().await {
                    Ok(Heard::Committed(events)) => {
                        let ours: Vec<Change> = events
                            .iter()
                            .filter(|e| e.page().is_none_or(|p| p == page_id))
                            .cloned()
                            .collect();
                        if ours.is_empty() {
                            continue; // another page's change
                        }
                        ours
                    }
                    Ok(Heard::Everything) | Err(RecvError::Lagged(_)) => Vec::new(),
                    Err(RecvError::Closed) => return None,
                };
                // The page is gone, renamed, made private or closed to this
                // visitor (a password set, a network or viewer list changed):
                // end the stream. Otherwise what this visitor may see of it:
                // nothing of a component of an audience group they are not in.
                let snap = state
                    .snapshots
                    .get(&slug)
                    .await
                    .ok()
                    .flatten()
                    .filter(|s| s.page_id == page_id && s.data.features.live_updates)?;
                let snap = crate::public_reads::admitted(&snap, &visitor).ok()?;
                let mut out: Vec<Result<Event, Infallible>> = ours
                    .iter()
                    .filter(|e| e.component().is_none_or(|c| !snap.hidden.contains(&c)))
                    .map(|e| Ok(change_event(e)))
                    .collect();
                // A commit of only what this visitor may not see sends them
                // nothing at all: a status event (a new version, a new
                // "last updated") would tell them something changed there.
                if out.is_empty() && !ours.is_empty() {
                    continue;
                }
                out.push(Ok(status_event(&snap)));
                return Some((stream::iter(out), (state, slug, changes)));
            }
        }
    })
    .flatten()
}

fn change_event(change: &Change) -> Event {
    Event::default()
        .event("change")
        .json_data(change)
        .unwrap_or_else(|_| Event::default().comment("unserializable"))
}
