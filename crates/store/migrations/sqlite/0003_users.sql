-- People who sign in to the admin interface, and their sessions.
CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    email         TEXT    NOT NULL UNIQUE,
    name          TEXT    NOT NULL,
    role          TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,
    totp_enabled  BOOLEAN NOT NULL DEFAULT FALSE,
    created_at    BIGINT  NOT NULL,
    last_login_at BIGINT
);

-- Only a SHA-256 of each session token is stored; the token lives in a cookie.
CREATE TABLE sessions (
    id           TEXT   PRIMARY KEY,
    user_id      BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    csrf_token   TEXT   NOT NULL,
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    client_addr  TEXT,
    user_agent   TEXT
);
CREATE INDEX sessions_user ON sessions(user_id);

-- Failed sign-ins per account and per client address.
CREATE TABLE login_throttle (
    key          TEXT    PRIMARY KEY,
    failures     BIGINT  NOT NULL,
    locked_until BIGINT  NOT NULL,
    updated_at   BIGINT  NOT NULL
);

-- The one-time link that creates the first owner of a fresh install.
CREATE TABLE setup_tokens (
    token_hash TEXT   PRIMARY KEY,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
