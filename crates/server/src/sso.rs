//! Single sign-on's protocol with the identity provider (OpenID Connect,
//! authorization code flow with PKCE, state and nonce), on the
//! `openidconnect` crate: discovery, the address the person is sent to,
//! and the checks of what comes back (the ID token's signature, issuer,
//! audience, expiry and nonce; the access token's hash). The rules of who
//! may come in with which role are `upstate_core::sso`'s.
//!
//! Every request to the provider goes through the guarded outgoing client
//! (`outgoing_allow`), without following redirects: a provider on a private
//! network must be allowed there, like any other address the server is
//! asked to reach. Discovery is kept for ten minutes per issuer (the
//! team's, and pages' own providers for their viewers), so a
//! sign-in costs the token request and, when the ID token carries no
//! groups, the user info request.

use openidconnect::core::{
    CoreAuthPrompt, CoreAuthenticationFlow, CoreClient, CoreProviderMetadata,
};
use openidconnect::{
    AccessTokenHash, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointMaybeSet,
    EndpointNotSet, EndpointSet, HttpRequest, HttpResponse, IssuerUrl, Nonce, OAuth2TokenResponse,
    PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope, TokenResponse,
};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use upstate_core::sso::{SsoSettings, groups_of};
use upstate_jobs::outgoing::{Guard, Outgoing, Tls};

/// How long discovery is believed.
const DISCOVERY_TTL: Duration = Duration::from_secs(600);
/// How many providers' discovery is kept at once (one per page at most).
const DISCOVERED_MAX: usize = 256;
/// The largest answer read from the provider.
const ANSWER_MAX: usize = 1024 * 1024;
/// How recent a sign-in at the provider must be to confirm a step-up.
pub const STEP_UP_AUTH_MAX_AGE_S: i64 = 600;

type Client = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// The settings in force: the saved ones, with the provider given in
/// configuration (if any) in place of the saved one.
pub async fn settings(state: &crate::state::AppState) -> upstate_store::StoreResult<SsoSettings> {
    Ok(upstate_store::settings::sso_settings(&state.db)
        .await?
        .with(state.settings.sso_connection.as_ref()))
}

/// The provider a sign-in goes to, and whether everyone it vouches for is
/// let in: for a viewer of a page with a provider of its own, that one
/// (`admit_all` as set there); otherwise the team's (viewers still need an
/// invitation or an allowed domain).
pub async fn provider_for(
    state: &crate::state::AppState,
    viewer_page: Option<upstate_core::Id>,
) -> upstate_store::StoreResult<(SsoSettings, bool)> {
    if let Some(page) = viewer_page
        && let Some(own) = upstate_store::viewer_providers::of(&state.db, page).await?
    {
        return Ok((own.settings(), own.admit_all));
    }
    Ok((settings(state).await?, false))
}

/// What the settings screen and `GET /api/sso-settings` show.
pub fn view(state: &crate::state::AppState, s: &SsoSettings) -> upstate_core::sso::SsoView {
    s.view(redirect_uri(state), state.settings.sso_connection.is_some())
}

/// Where the provider sends people back: the address to register there
/// (one for the team's provider and every page's own).
pub fn redirect_uri(state: &crate::state::AppState) -> String {
    callback_at(&state.settings.public_url)
}

/// The same address under a public URL a screen was given.
pub fn callback_at(public_url: &str) -> String {
    format!("{}/api/auth/sso/callback", public_url.trim_end_matches('/'))
}

/// Why a request to the provider found no answer.
#[derive(Debug)]
pub struct HttpError(String);

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HttpError {}

/// One instance's link to the identity provider.
pub struct Provider {
    /// The client, or why it could not be built (then every sign-in says so).
    outgoing: Result<Outgoing, String>,
    /// Discovery by issuer: the team's and pages' own providers.
    discovered: Mutex<HashMap<String, (Instant, CoreProviderMetadata)>>,
}

/// Where to send the person, and what their answer is checked with.
pub struct Started {
    pub url: String,
    pub state: String,
    pub nonce: String,
    pub verifier: String,
}

/// Who the provider vouched for, its signature checked.
#[derive(Debug)]
pub struct Vouched {
    /// `{issuer} {sub}`.
    pub subject: String,
    pub email: Option<String>,
    pub email_verified: bool,
    pub name: String,
    pub groups: Vec<String>,
    /// When the person last proved themselves at the provider (seconds).
    pub auth_time: Option<i64>,
}

/// One request to the provider, through the guarded client.
async fn call(out: &Outgoing, req: HttpRequest) -> Result<HttpResponse, HttpError> {
    let headers: Vec<(&str, String)> = req
        .headers()
        .iter()
        .filter_map(|(n, v)| Some((n.as_str(), v.to_str().ok()?.to_string())))
        .collect();
    let answer = out
        .send_whole(
            req.method().as_str(),
            &req.uri().to_string(),
            &headers,
            req.body(),
            ANSWER_MAX,
        )
        .await
        .map_err(|f| HttpError(f.reason))?;
    let mut res = openidconnect::http::Response::builder().status(answer.status);
    if let Some(ct) = &answer.content_type {
        res = res.header(openidconnect::http::header::CONTENT_TYPE, ct);
    }
    res.body(answer.body.into_bytes())
        .map_err(|e| HttpError(e.to_string()))
}

fn describe(e: impl std::error::Error) -> String {
    // The crate's errors say what failed in their source chain.
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

impl Provider {
    pub fn new(allow: Vec<ipnet::IpNet>) -> Provider {
        let outgoing = Outgoing::build(
            Guard {
                allow,
                setting: "outgoing_allow",
            },
            Duration::from_secs(10),
            false,
            "single sign-on",
            Tls::Verify,
        );
        Provider {
            outgoing,
            discovered: Mutex::new(HashMap::new()),
        }
    }

    fn http(
        &self,
    ) -> impl Fn(
        HttpRequest,
    )
        -> std::pin::Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send>>
    + use<> {
        let out = self.outgoing.clone();
        move |req| {
            let out = out.clone();
            Box::pin(async move {
                match out {
                    Ok(out) => call(&out, req).await,
                    Err(e) => Err(HttpError(e)),
                }
            })
        }
    }

    /// The provider's metadata, from the cache while it is fresh.
    async fn metadata(&self, issuer: &str) -> Result<CoreProviderMetadata, String> {
        if let Ok(kept) = self.discovered.lock()
            && let Some((at, meta)) = kept.get(issuer)
            && at.elapsed() < DISCOVERY_TTL
        {
            return Ok(meta.clone());
        }
        let url = IssuerUrl::new(issuer.to_string()).map_err(|e| format!("issuer: {e}"))?;
        let meta = CoreProviderMetadata::discover_async(url, &self.http())
            .await
            .map_err(|e| format!("discovery at {issuer} failed: {}", describe(e)))?;
        if let Ok(mut kept) = self.discovered.lock() {
            kept.retain(|_, (at, _)| at.elapsed() < DISCOVERY_TTL);
            if kept.len() >= DISCOVERED_MAX {
                kept.clear();
            }
            kept.insert(issuer.to_string(), (Instant::now(), meta.clone()));
        }
        Ok(meta)
    }

    async fn client(&self, s: &SsoSettings, redirect: &str) -> Result<Client, String> {
        let meta = self.metadata(&s.issuer).await?;
        let redirect = RedirectUrl::new(redirect.to_string()).map_err(|e| e.to_string())?;
        Ok(CoreClient::from_provider_metadata(
            meta,
            ClientId::new(s.client_id.clone()),
            Some(ClientSecret::new(s.client_secret.clone())),
        )
        .set_redirect_uri(redirect))
    }

    /// Checks that the provider answers discovery (the settings screen's
    /// test): its authorization endpoint.
    pub async fn check(&self, s: &SsoSettings) -> Result<String, String> {
        let meta = self.metadata(&s.issuer).await?;
        Ok(meta.authorization_endpoint().to_string())
    }

    /// Where to send the person. `again`: they must prove themselves at the
    /// provider now, even when signed in there (a step-up).
    pub async fn start(
        &self,
        s: &SsoSettings,
        redirect: &str,
        again: bool,
    ) -> Result<Started, String> {
        let client = self.client(s, redirect).await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scope(Scope::new("email".into()))
            .add_scope(Scope::new("profile".into()))
            .set_pkce_challenge(challenge);
        if again {
            request = request
                .add_prompt(CoreAuthPrompt::Login)
                .set_max_age(Duration::ZERO);
        }
        let (url, state, nonce) = request.url();
        Ok(Started {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            verifier: verifier.secret().clone(),
        })
    }

    /// Trades the code for tokens and checks them.
    pub async fn finish(
        &self,
        s: &SsoSettings,
        redirect: &str,
        code: &str,
        nonce: &str,
        verifier: &str,
    ) -> Result<Vouched, String> {
        let client = self.client(s, redirect).await?;
        let http = self.http();
        let tokens = client
            .exchange_code(AuthorizationCode::new(code.to_string()))
            .map_err(describe)?
            .set_pkce_verifier(PkceCodeVerifier::new(verifier.to_string()))
            .request_async(&http)
            .await
            .map_err(|e| format!("the provider refused the code: {}", describe(e)))?;
        let id_token = tokens.id_token().ok_or("the provider sent no ID token")?;
        let check = client.id_token_verifier();
        let claims = id_token
            .claims(&check, &Nonce::new(nonce.to_string()))
            .map_err(|e| format!("the ID token does not hold: {}", describe(e)))?;
        if let Some(expected) = claims.access_token_hash() {
            let alg = id_token.signing_alg().map_err(describe)?;
            let key = id_token.signing_key(&check).map_err(describe)?;
            let actual =
                AccessTokenHash::from_token(tokens.access_token(), alg, key).map_err(describe)?;
            if actual != *expected {
                return Err("the access token is not the one the ID token names".into());
            }
        }
        // The claims the crate does not type (the groups), read from the
        // token whose signature was just checked.
        let mut extra = payload(&id_token.to_string()).unwrap_or_default();
        let wanted = [s.groups_claim.as_str(), "email", "name"];
        if wanted.iter().any(|c| extra.get(*c).is_none())
            && let Some(url) = client.user_info_url()
        {
            let bearer = format!("Bearer {}", tokens.access_token().secret());
            if let Ok(out) = &self.outgoing
                && let Ok(a) = out
                .send_whole(
                    "GET",
                    url.as_str(),
                    &[("authorization", bearer), ("accept", "application/json".into())],
                    &[],
                    ANSWER_MAX,
                )
                .await
                && a.status == 200
                && let Ok(serde_json::Value::Object(info)) = serde_json::from_str(&a.body)
                // User info is only believed for the same person.
                && info.get("sub").and_then(|v| v.as_str()) == Some(claims.subject().as_str())
            {
                for (k, v) in info {
                    extra.entry(k).or_insert(v);
                }
            }
        }
        let email = claims.email().map(|e| e.as_str().to_string()).or_else(|| {
            extra
                .get("email")
                .and_then(|v| v.as_str())
                .map(str::to_string)
        });
        let email_verified = claims
            .email_verified()
            .or_else(|| extra.get("email_verified").and_then(|v| v.as_bool()))
            .unwrap_or(false);
        let name = claims
            .name()
            .and_then(|n| n.get(None))
            .map(|n| n.as_str().to_string())
            .or_else(|| {
                extra
                    .get("name")
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            })
            .unwrap_or_default();
        Ok(Vouched {
            subject: format!("{} {}", claims.issuer().as_str(), claims.subject().as_str()),
            email,
            email_verified,
            name,
            groups: groups_of(extra.get(&s.groups_claim)),
            auth_time: claims.auth_time().map(|t| t.timestamp()),
        })
    }
}

/// The claims of a JWT's payload (its signature checked elsewhere).
fn payload(jwt: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    use base64::Engine;
    let part = jwt.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part.trim_end_matches('='))
        .ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        serde_json::Value::Object(m) => Some(m),
        _ => None,
    }
}
