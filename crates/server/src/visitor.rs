//! Who reads a public route: the request's headers (the page's password
//! cookie, `Accept`, validators) and the client's address as the page gate
//! must see it. Every public read takes a `Visitor` where it took the
//! headers, so a gate that needs more than headers (networks) is one place.

use crate::client_ip::client_ip;
use crate::state::AppState;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::HeaderMap;
use axum::http::request::Parts;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::ops::Deref;

#[derive(Debug, Clone, Default)]
pub(crate) struct Visitor {
    pub headers: HeaderMap,
    /// The client's address (after trusted proxies); none for requests made
    /// from inside (the static copy), which restricted pages never answer.
    pub ip: Option<IpAddr>,
    /// A viewer's token (`?token=`): feed readers and calendar apps read a
    /// private page with it, since they cannot carry the cookie.
    pub token: Option<String>,
}

impl Deref for Visitor {
    type Target = HeaderMap;

    fn deref(&self) -> &HeaderMap {
        &self.headers
    }
}

impl FromRequestParts<AppState> for Visitor {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Infallible> {
        let inside = parts
            .extensions
            .get::<crate::static_copy::StaticCopy>()
            .is_some();
        let ip = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .filter(|_| !inside)
            .map(|c| client_ip(c.0.ip(), &parts.headers, &state.settings.trusted_proxies));
        let token = parts.uri.query().and_then(|q| {
            form_urlencoded::parse(q.as_bytes())
                .find(|(k, _)| k == "token")
                .map(|(_, v)| v.chars().take(200).collect())
        });
        Ok(Visitor {
            headers: parts.headers.clone(),
            ip,
            token,
        })
    }
}
