//! The person's own account: two-factor and API keys.

use super::{Page, Screen, fail};
use crate::state::AppState;
use crate::views::admin as view;
use axum::extract::State;
use axum::http::header;
use upstate_core::roles::Permission;

pub(super) async fn account(State(state): State<AppState>, s: Screen) -> Page {
    let user = &s.who.session.user;
    let tf = if user.totp_enabled {
        view::TwoFactor::On
    } else {
        let st = upstate_store::two_factor::state(&state.db, user.id)
            .await
            .map_err(fail)?;
        match st.pending {
            Some(secret) => {
                let qr = crate::totp::uri(&secret, &user.email)
                    .and_then(|uri| crate::totp::qr_svg(&uri))
                    .unwrap_or_default();
                view::TwoFactor::Pending { secret, qr_svg: qr }
            }
            None => view::TwoFactor::Off,
        }
    };
    let mut res = s.show(view::account(
        &s.frame("account"),
        s.flash(),
        &tf,
        user.must_change_password,
    ));
    // The recovery codes it may show must not stay in any cache.
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    Ok(res)
}

pub(super) async fn keys(State(state): State<AppState>, s: Screen) -> Page {
    if let Some(refused) = s.refuse(Permission::KeysManage, "keys") {
        return Ok(refused);
    }
    let mine = upstate_store::api_keys::list_of(&state.db, s.who.session.user.id)
        .await
        .map_err(fail)?;
    let mut res = s.show(view::keys(&s.frame("keys"), s.flash(), &mine));
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    Ok(res)
}
