-- Web push: a browser's subscription is a subscriber of kind `push` whose
-- target is its endpoint; these are the keys each message is encrypted to.
ALTER TABLE subscribers ADD COLUMN push_p256dh TEXT;
ALTER TABLE subscribers ADD COLUMN push_auth TEXT;
-- The install's one VAPID key pair (P-256, base64url), made on first use
-- and kept: browsers bind their subscriptions to the public key.
CREATE TABLE vapid_keys (
    id          BIGINT PRIMARY KEY,
    private_key TEXT   NOT NULL,
    public_key  TEXT   NOT NULL,
    created_at  BIGINT NOT NULL
);
