//! A private page's own identity provider for its viewers: a customer's
//! tenant (their Entra, Okta or Keycloak realm) signs in the people of the
//! page it was set up for, instead of the team's provider. The protocol is
//! the team's (`sso`); only who decides differs: with `admit_all`, everyone
//! the provider vouches for (with a verified email) reads the page, since
//! the customer's own directory is the list; without it, the page's invited
//! emails and domains still decide, as they do for mailed links.

use crate::FieldErrors;
use crate::sso::{SsoSettings, button_label, token};
use crate::validate;
use serde::{Deserialize, Serialize};

/// What is kept of a page's provider (the secret opened).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewerProvider {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: String,
    pub button_label: String,
    pub admit_all: bool,
}

impl ViewerProvider {
    /// The settings the sign-in protocol takes (the team's shape; no roles,
    /// since viewers have none). Not offered while its secret is missing
    /// (withheld by the export it was imported from): the gate shows no
    /// button that could only fail.
    pub fn settings(&self) -> SsoSettings {
        SsoSettings {
            enabled: !self.client_secret.is_empty(),
            issuer: self.issuer.clone(),
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone(),
            button_label: self.button_label.clone(),
            ..SsoSettings::default()
        }
    }

    pub fn view(&self, redirect_uri: String) -> ViewerProviderView {
        ViewerProviderView {
            issuer: self.issuer.clone(),
            client_id: self.client_id.clone(),
            client_secret_set: !self.client_secret.is_empty(),
            button_label: self.button_label.clone(),
            admit_all: self.admit_all,
            redirect_uri,
        }
    }

    /// What the audit log keeps: everything but the secret.
    pub fn audited(&self) -> serde_json::Value {
        serde_json::json!({
            "issuer": self.issuer,
            "clientId": self.client_id,
            "buttonLabel": self.button_label,
            "admitAll": self.admit_all,
        })
    }
}

/// `GET /api/v1/statuspages/{id}/viewer-provider`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ViewerProviderView {
    pub issuer: String,
    pub client_id: String,
    /// Whether a client secret is saved (it is never shown).
    pub client_secret_set: bool,
    pub button_label: String,
    /// Everyone the provider signs in (with a verified email) reads the
    /// page; otherwise only invited emails and allowed domains.
    pub admit_all: bool,
    /// The redirect URI to register with the provider (the team's too).
    pub redirect_uri: String,
}

/// `PUT /api/v1/statuspages/{id}/viewer-provider`: the whole setting.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ViewerProviderInput {
    /// The provider's issuer URL, such as
    /// `https://login.microsoftonline.com/{tenant}/v2.0`.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url))]
    pub issuer: String,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::credential))]
    pub client_id: String,
    /// Leave out to keep the saved secret of the same client id.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::credential))]
    pub client_secret: Option<String>,
    /// The gate's button (default "Sign in with single sign-on").
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name))]
    pub button_label: Option<String>,
    /// Let in everyone the provider signs in; default false (only invited
    /// emails and the page's viewer domains).
    #[serde(default)]
    pub admit_all: bool,
}

impl ViewerProviderInput {
    /// The provider this input makes, keeping `current`'s secret where the
    /// input leaves it out for the same client.
    pub fn apply(self, current: Option<&ViewerProvider>) -> Result<ViewerProvider, FieldErrors> {
        let mut e = FieldErrors::new();
        let issuer = e
            .check("issuer", validate::url(&self.issuer))
            .map(|u| u.trim_end_matches('/').to_string())
            .unwrap_or_default();
        let client_id = e
            .check("clientId", token("the client id", &self.client_id))
            .unwrap_or_default();
        let client_secret = match self.client_secret {
            Some(s) if !s.trim().is_empty() => e
                .check("clientSecret", token("the client secret", &s))
                .unwrap_or_default(),
            // A secret withheld by an export comes back empty: asked again.
            _ => {
                match current.filter(|c| c.client_id == client_id && !c.client_secret.is_empty()) {
                    Some(c) => c.client_secret.clone(),
                    None => {
                        e.push("clientSecret", "is required with a new client id");
                        String::new()
                    }
                }
            }
        };
        let button_label = button_label(self.button_label.as_deref(), &mut e);
        e.into_result()?;
        Ok(ViewerProvider {
            issuer,
            client_id,
            client_secret,
            button_label,
            admit_all: self.admit_all,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn input(v: serde_json::Value) -> ViewerProviderInput {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_provider_keeps_its_secret_for_the_same_client_only() {
        let saved = input(
            json!({"issuer": "https://id.acme.example/", "clientId": "status",
            "clientSecret": "s3cret", "admitAll": true}),
        )
        .apply(None)
        .unwrap();
        assert_eq!(saved.issuer, "https://id.acme.example");
        assert_eq!(saved.button_label, crate::sso::DEFAULT_BUTTON_LABEL);
        let same = input(json!({"issuer": "https://id.acme.example", "clientId": "status"}))
            .apply(Some(&saved))
            .unwrap();
        assert_eq!(same.client_secret, "s3cret");
        assert!(!same.admit_all, "the whole setting: left out is false");
        let other = input(json!({"issuer": "https://id.acme.example", "clientId": "other"}))
            .apply(Some(&saved))
            .unwrap_err();
        assert_eq!(other.0[0].field, "clientSecret");
        assert!(same.settings().offered());
        let imported = ViewerProvider {
            client_secret: String::new(),
            ..same
        };
        assert!(
            !imported.settings().offered(),
            "a withheld secret offers no button"
        );
    }

    #[test]
    fn bad_providers_are_refused_by_field() {
        let e = input(
            json!({"issuer": "acme", "clientId": "a b", "clientSecret": "x y",
            "buttonLabel": "\u{7}"}),
        )
        .apply(None)
        .unwrap_err();
        let fields: Vec<&str> = e.0.iter().map(|f| f.field.as_str()).collect();
        for f in ["issuer", "clientId", "clientSecret", "buttonLabel"] {
            assert!(fields.contains(&f), "{f} in {fields:?}");
        }
    }
}
