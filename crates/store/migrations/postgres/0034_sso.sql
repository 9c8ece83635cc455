-- Single sign-on for the team (docs/sso.md). A person who came in through
-- the identity provider is found again by its issuer and subject, so a
-- changed email at the provider still reaches the same account.
ALTER TABLE users ADD COLUMN sso_subject TEXT;
CREATE UNIQUE INDEX users_sso_subject ON users (sso_subject);

-- Sign-ins under way at the provider: the state sent there (hashed), the
-- nonce and PKCE verifier the answer is checked with, and where to go
-- after. Each row is taken once; rows older than ten minutes are refused.
-- A step-up at the provider names the session and step-up it verifies.
CREATE TABLE sso_logins (
    state_hash  TEXT   PRIMARY KEY,
    nonce       TEXT   NOT NULL,
    verifier    TEXT   NOT NULL,
    next_path   TEXT   NOT NULL,
    session_id  TEXT,
    step_up     TEXT,
    created_at  BIGINT NOT NULL
);
