//! `/api/v1/statuspages`: list view (summary fields) and detail view (all
//! settings plus the page's components and groups).

use crate::error::ApiResult;
use crate::extract::{Body, PathId};
use crate::respond::{created, data, deleted};
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use axum::{Router, routing::MethodRouter};
use serde::Serialize;
use upstate_core::*;
use upstate_store::{components, groups, pages};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/statuspages", get(list).post(create))
        .route("/statuspages/{id}", MethodRouter::new().get(show).patch(update).delete(remove))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListItem<'a> {
    id: Id,
    name: &'a str,
    slug: &'a str,
    description: &'a str,
    logo_url: Option<&'a str>,
    is_public: bool,
    created_at: Timestamp,
}

impl<'a> From<&'a StatusPage> for ListItem<'a> {
    fn from(p: &'a StatusPage) -> Self {
        ListItem {
            id: p.id,
            name: &p.name,
            slug: &p.slug,
            description: &p.description,
            logo_url: p.logo_url.as_deref(),
            is_public: p.is_public,
            created_at: p.created_at,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Detail {
    #[serde(flatten)]
    page: StatusPage,
    components: Vec<Component>,
    component_groups: Vec<ComponentGroup>,
}

async fn detail(state: &AppState, page: StatusPage) -> ApiResult<Detail> {
    let components = components::list(&state.db, Some(page.id), None).await?;
    let component_groups = groups::list(&state.db, Some(page.id)).await?;
    Ok(Detail { page, components, component_groups })
}

async fn list(State(state): State<AppState>) -> ApiResult<Response> {
    let all = pages::list(&state.db).await?;
    Ok(data(all.iter().map(ListItem::from).collect::<Vec<_>>()))
}

async fn show(State(state): State<AppState>, PathId(id): PathId) -> ApiResult<Response> {
    let page = pages::get(&state.db, id).await?;
    Ok(data(detail(&state, page).await?))
}

async fn create(State(state): State<AppState>, Body(input): Body<NewPageInput>) -> ApiResult<Response> {
    let page = pages::create(&state.db, input.validate()?).await?;
    let location = format!("/api/v1/statuspages/{}", page.id);
    Ok(created(location, detail(&state, page).await?))
}

async fn update(
    State(state): State<AppState>,
    PathId(id): PathId,
    Body(input): Body<PagePatchInput>,
) -> ApiResult<Response> {
    let page = pages::update(&state.db, id, input.validate()?).await?;
    Ok(data(detail(&state, page).await?))
}

async fn remove(State(state): State<AppState>, PathId(id): PathId) -> ApiResult<Response> {
    pages::delete(&state.db, id).await?;
    Ok(deleted("Status page"))
}
