//! The timeline (updates, newest first) and affected components of
//! incidents or maintenance windows, read for one or for a whole list by
//! their owners' ids: one piece of code for both kinds, two queries per
//! list whatever its length, and each list's filter bound once.

use crate::db::Db;
use crate::error::StoreResult;
use crate::rows::{LinkRow, UpdateRow, by_owner};
use std::collections::HashMap;
use upstate_core::Id;

/// Where one kind keeps its children.
pub(crate) struct Owner {
    updates: &'static str,
    links: &'static str,
}

pub(crate) const INCIDENTS: Owner = Owner {
    updates: "SELECT incident_id AS owner_id, id, status, message, created_at FROM incident_updates \
              WHERE incident_id IN (",
    links: "SELECT incident_id AS owner_id, component_id FROM incident_components WHERE incident_id IN (",
};

pub(crate) const MAINTENANCE: Owner = Owner {
    updates: "SELECT maintenance_id AS owner_id, id, status, message, created_at FROM maintenance_updates \
              WHERE maintenance_id IN (",
    links: "SELECT maintenance_id AS owner_id, component_id FROM maintenance_components \
            WHERE maintenance_id IN (",
};

/// Ids per statement: far below SQLite's and PostgreSQL's limits on bound
/// parameters, so a list of any length reads.
const CHUNK: usize = 500;

/// The children of some owners, taken out owner by owner.
pub(crate) struct Children<U> {
    updates: HashMap<Id, Vec<U>>,
    links: HashMap<Id, Vec<Id>>,
}

impl<U> Children<U> {
    /// One owner's updates (newest first) and affected components (by id).
    pub(crate) fn take(&mut self, owner: Id) -> (Vec<U>, Vec<Id>) {
        (
            self.updates.remove(&owner).unwrap_or_default(),
            self.links.remove(&owner).unwrap_or_default(),
        )
    }
}

pub(crate) async fn of<U>(
    db: &Db,
    owner: &Owner,
    ids: &[Id],
    update: impl Fn(UpdateRow) -> StoreResult<U>,
) -> StoreResult<Children<U>> {
    let mut updates: Vec<UpdateRow> = Vec::new();
    let mut links: Vec<LinkRow> = Vec::new();
    for chunk in ids.chunks(CHUNK) {
        updates.extend(on_db!(db, |c| {
            let mut q = sqlx::QueryBuilder::new(owner.updates);
            let mut listed = q.separated(", ");
            for id in chunk {
                listed.push_bind(*id);
            }
            q.push(") ORDER BY created_at DESC, id DESC");
            q.build_query_as::<UpdateRow>().fetch_all(c).await?
        }));
        links.extend(on_db!(db, |c| {
            let mut q = sqlx::QueryBuilder::new(owner.links);
            let mut listed = q.separated(", ");
            for id in chunk {
                listed.push_bind(*id);
            }
            q.push(") ORDER BY component_id");
            q.build_query_as::<LinkRow>().fetch_all(c).await?
        }));
    }
    Ok(Children {
        updates: by_owner(updates, |u| u.owner_id, update)?,
        links: by_owner(links, |l| l.owner_id, |l| Ok(l.component_id))?,
    })
}
