//! `/api/comments`: visitors comment on an incident when the `comments`
//! switch is on; `/api/comments/admin` is the moderation queue
//! (INCIDENTS_WRITE: whoever tells the story of an incident decides what
//! visitors add to it). See docs/comments.md.

use crate::caller::Caller;
use crate::client_ip::client_ip;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, FormOrJson, PathId, QueryParams};
use crate::i18n::{self, Lang};
use crate::openapi::{BadQuery, BodyErrors, NotFound, PrivatePage, SessionErrors, Throttled};
use crate::public_reads;
use crate::rate_limit::Subject;
use crate::respond::{Data, Message, data, deleted};
use crate::session::audit_ctx;
use crate::snapshot::Snapshot;
use crate::state::AppState;
use crate::views::notice_page;
use crate::visitor::Visitor;
use axum::extract::{ConnectInfo, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use serde::Serialize;
use std::net::SocketAddr;
use std::sync::Arc;
use upstate_core::audit::Actor;
use upstate_core::comments::{Comment, CommentInput, ModerationInput, PublicComment};
use upstate_core::roles::Permission;
use upstate_core::{CommentStatus, FieldErrors, Id};
use upstate_store::comments;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_shown, post))
        .routes(routes!(queue))
        .routes(routes!(moderate, remove))
}

/// The snapshot of the page an incident is on, when visitors may comment
/// there: the switch is on, the page is public (or opened with its
/// password or as a viewer) and the incident exists for this reader: one
/// only about components of audience groups they are not in is no more
/// theirs to read or comment on than to see.
async fn commentable(
    state: &AppState,
    incident: Id,
    headers: &Visitor,
) -> ApiResult<(Arc<Snapshot>, Id)> {
    let missing = || ApiError::NotFound(format!("no incident {incident}"));
    let Some((page, slug)) = comments::incident_page(&state.db, incident).await? else {
        return Err(missing());
    };
    let snap = public_reads::page(state, &slug, headers).await?;
    public_reads::offered(snap.data.features.comments, "comments")?;
    if !snap.hidden.is_empty() && !snap.data.incidents.iter().any(|i| i.id == incident) {
        upstate_store::public::incident(&state.db, page, incident)
            .await?
            .and_then(|i| upstate_store::public::shown_without(i, &snap.hidden))
            .ok_or_else(missing)?;
    }
    Ok((snap, page))
}

#[utoipa::path(get, path = "/api/comments", tag = "comments", operation_id = "listComments",
    summary = "An incident's approved comments, oldest first",
    description = "404 when comments are turned off (`/api/features`), or the incident is on no public page.",
    params(("incidentId" = i64, Query, description = "The incident")),
    responses((status = 200, body = Data<Vec<PublicComment>>), NotFound, BadQuery, PrivatePage),
    security(()))]
async fn list_shown(
    State(state): State<AppState>,
    headers: Visitor,
    q: QueryParams,
) -> ApiResult<Response> {
    let mut e = FieldErrors::new();
    let incident = q.id("incidentId", &mut e);
    if incident.is_none() && e.is_empty() {
        e.push("incidentId", "is required");
    }
    e.into_result()?;
    let incident = incident.unwrap_or_default();
    commentable(&state, incident, &headers).await?;
    Ok(data(comments::shown(&state.db, incident).await?))
}

/// What the visitor is told.
#[derive(Serialize, utoipa::ToSchema)]
struct Received {
    message: String,
    /// pending (waits for a moderator) or approved (shown now).
    status: CommentStatus,
}

#[utoipa::path(post, path = "/api/comments", tag = "comments", operation_id = "postComment",
    summary = "Comment on an incident (visitors; no sign-in)",
    description = "Plain text, at most 1,000 characters, an optional name of at most 60. \
        Held for moderation unless the install's `moderateComments` setting is off. \
        Limited to 3 a minute and 10 an hour per client address. HTML forms get a page back.",
    request_body = CommentInput,
    responses((status = 202, body = Data<Received>), BodyErrors, NotFound, Throttled, PrivatePage),
    security(()))]
async fn post(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: Visitor,
    q: QueryParams,
    FormOrJson(input, is_form): FormOrJson<CommentInput>,
) -> Response {
    let form = i18n::of_form(&state.db, is_form, q.get("lang"), &headers).await;
    let result = async {
        let new = input.validate()?;
        let (snap, page) = commentable(&state, new.incident_id, &headers).await?;
        let ip = client_ip(peer.ip(), &headers, &state.settings.trusted_proxies);
        if let Some(d) = state.comment_limits.take(Subject::Addr(ip)).await
            && let Some(retry_after_secs) = d.retry_after_secs
        {
            return Err(ApiError::RateLimited { retry_after_secs });
        }
        let shown = !snap.data.settings.moderate_comments;
        let ctx = audit_ctx(&headers, Some(peer), &state, Actor::anonymous());
        let c = comments::create(&state.db, &ctx, page, &new, shown).await?;
        Ok::<_, ApiError>((snap, c))
    }
    .await;
    match result {
        Ok((snap, c)) => {
            let lang = form.unwrap_or(Lang::En);
            let message = lang.t(if c.status == CommentStatus::Approved {
                "notice.comment_shown"
            } else {
                "notice.comment_held"
            });
            if form.is_some() {
                let back = format!(
                    "/s/{}/incidents/{}?lang={}",
                    snap.data.page.slug,
                    c.incident_id,
                    lang.code()
                );
                return Html(notice_page(
                    lang,
                    lang.t("notice.comment_title"),
                    message,
                    Some((&back, lang.t("notice.back_incident"))),
                    None,
                ))
                .into_response();
            }
            (
                StatusCode::ACCEPTED,
                data(Received {
                    message: message.into(),
                    status: c.status,
                }),
            )
                .into_response()
        }
        Err(e) => e.answer(form),
    }
}

#[utoipa::path(get, path = "/api/comments/admin", tag = "comments", operation_id = "listCommentsToModerate",
    summary = "The moderation queue: comments newest first (needs INCIDENTS_WRITE)",
    params(("status" = Option<String>, Query, description = "pending (default), approved, rejected or all"),
        ("incidentId" = Option<i64>, Query, description = "Only this incident's"),
        ("limit" = Option<i64>, Query, description = "1 to 500, default 100")),
    responses((status = 200, body = Data<Vec<Comment>>), SessionErrors, BadQuery),
    security(("session" = []), ("api_key" = [])))]
async fn queue(
    State(state): State<AppState>,
    caller: Caller,
    q: QueryParams,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    let mut e = FieldErrors::new();
    let status = q
        .one_of(
            "status",
            &["pending", "approved", "rejected", "all"],
            &mut e,
        )
        .parse::<CommentStatus>()
        .ok();
    let incident = q.id("incidentId", &mut e);
    let limit = q.limit("limit", 100, 500, &mut e);
    e.into_result()?;
    Ok(data(
        comments::list(&state.db, status, incident, limit).await?,
    ))
}

#[utoipa::path(patch, path = "/api/comments/admin/{id}", tag = "comments", operation_id = "moderateComment",
    summary = "Approve (show), reject (never show) or return a comment to the queue (needs INCIDENTS_WRITE); audited",
    params(("id" = i64, Path)), request_body = ModerationInput,
    responses((status = 200, body = Data<Comment>), SessionErrors, BodyErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn moderate(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<ModerationInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    let to = input.validate()?;
    Ok(data(
        comments::moderate(&state.db, &caller.audit, id, to).await?,
    ))
}

#[utoipa::path(delete, path = "/api/comments/admin/{id}", tag = "comments", operation_id = "deleteComment",
    summary = "Remove a comment for good (needs INCIDENTS_WRITE); audited",
    params(("id" = i64, Path)),
    responses((status = 200, body = Message), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    comments::delete(&state.db, &caller.audit, id).await?;
    Ok(deleted("Comment"))
}
