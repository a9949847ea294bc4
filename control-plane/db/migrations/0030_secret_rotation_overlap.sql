-- Secrets rotate with an overlap: the secret a rotation replaces keeps working until
-- previous_secret_expires_at (null: it stopped at once), so senders and clients can switch without
-- a window of refusals.
--
-- Webhook secrets (current and previous) are sealed by the control plane with the operator's key
-- (AES-256-GCM, `SECRETS_KEY`): `sealed:v1:<key id>:<iv>:<ciphertext>:<tag>`. Rows an earlier
-- version wrote in plain text are sealed by the control plane when it starts; until then they are
-- read as they are. The database never holds the key. As before, svc_app has no privilege to read
-- either column (its column grants list neither).
alter table webhook_endpoints
  add column previous_secret text,
  add column previous_secret_expires_at timestamptz;

-- A client secret's previous scrypt hash, checked beside the current one until it expires.
alter table idp_apps
  add column previous_secret_hash text,
  add column previous_secret_expires_at timestamptz;
