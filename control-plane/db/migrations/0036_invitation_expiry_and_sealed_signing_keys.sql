-- Invitations expire: an administrator's invitation (a membership with status 'invited') can be
-- accepted until invitation_expires_at; inviting the user again renews it. Invitations made
-- before expiry existed get the full default window from now.
alter table memberships add column invitation_expires_at timestamptz;
update memberships set invitation_expires_at = now() + interval '7 days' where status = 'invited';

-- Realtime signing keys are sealed with the operator's key (SECRETS_KEY, like webhook secrets):
-- sealed_secret holds `sealed:v1:...`, and secret (the key itself) is emptied. Keys an earlier
-- version wrote in plain text are sealed by the control plane when it starts; until then they are
-- read as they are. The database never holds the operator key.
alter table realtime_signing_keys add column sealed_secret text;
alter table realtime_signing_keys alter column secret drop not null;
alter table realtime_signing_keys add constraint realtime_signing_keys_kept check (secret is not null or sealed_secret is not null);
