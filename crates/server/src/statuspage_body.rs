//! The JSON bodies of a status page, shared by the management API
//! (`/api/v1/statuspages`) and the application routes (`/api/statuspages`):
//! the list view (summary fields) and the detail view (all settings plus the
//! page's components and groups).

use crate::error::ApiResult;
use crate::state::AppState;
use serde::Serialize;
use upstate_core::*;
use upstate_store::{components, groups, pages};

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListItem<'a> {
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

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Detail {
    #[serde(flatten)]
    page: StatusPage,
    components: Vec<Component>,
    component_groups: Vec<ComponentGroup>,
    /// Whether visitors can open this page with a password while it is not
    /// public (set with `PUT /statuspages/{id}/password`).
    password_protected: bool,
}

pub(crate) async fn detail(state: &AppState, page: StatusPage) -> ApiResult<Detail> {
    let components = components::list(&state.db, Some(page.id), None).await?;
    let component_groups = groups::list(&state.db, Some(page.id)).await?;
    let password_protected = pages::password_hash(&state.db, page.id).await?.is_some();
    Ok(Detail {
        page,
        components,
        component_groups,
        password_protected,
    })
}
