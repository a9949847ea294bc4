import type { Tx } from '../db/client.ts';

/** How long a key is remembered. */
export const IDEMPOTENCY_KEY_TTL = '24 hours';

/**
 * Claims the caller's key for this transaction: true when it was free (or had expired), false when
 * a live row holds it. A concurrent claim of the same key waits here until the holder's
 * transaction ends, and then sees its committed row (or claims the key if it rolled back).
 */
export async function claimIdempotencyKey(tx: Tx, actor: string, key: string, fingerprint: string): Promise<boolean> {
  const rows = await tx.unsafe(
    `insert into idempotency_keys (tenant_id, actor, key, fingerprint, expires_at)
     values (current_tenant_id(), $1, $2, $3, now() + interval '${IDEMPOTENCY_KEY_TTL}')
     on conflict (tenant_id, actor, key) do update
       set fingerprint = excluded.fingerprint, response = null, created_at = now(), expires_at = excluded.expires_at
       where idempotency_keys.expires_at <= now()
     returning 1`,
    [actor, key, fingerprint],
    { prepare: true },
  );
  return rows.length > 0;
}

/** The live row holding the caller's key, if any. */
export async function findIdempotencyKey(tx: Tx, actor: string, key: string): Promise<{ fingerprint: string; response: unknown } | undefined> {
  const rows = await tx.unsafe<{ fingerprint: string; response: unknown }[]>(
    `select fingerprint, response from idempotency_keys where tenant_id = current_tenant_id() and actor = $1 and key = $2 and expires_at > now()`,
    [actor, key],
    { prepare: true },
  );
  return rows[0];
}

export async function saveIdempotentResponse(tx: Tx, actor: string, key: string, response: unknown): Promise<void> {
  await tx.unsafe(`update idempotency_keys set response = $3::text::jsonb where tenant_id = current_tenant_id() and actor = $1 and key = $2`, [actor, key, JSON.stringify(response)], {
    prepare: true,
  });
}

/** Removes up to `limit` of the tenant's expired keys, skipping any another transaction holds. */
export async function deleteExpiredIdempotencyKeys(tx: Tx, limit = 100): Promise<void> {
  await tx.unsafe(
    `delete from idempotency_keys where ctid = any(array(
       select ctid from idempotency_keys where tenant_id = current_tenant_id() and expires_at <= now() limit $1::int for update skip locked))`,
    [limit],
    { prepare: true },
  );
}

/** Platform work (the owner's transaction): removes up to `limit` expired keys of any tenant, skipping any another transaction holds. */
export async function deleteExpiredIdempotencyKeysOfAllTenants(tx: Tx, limit: number): Promise<number> {
  const rows = await tx.unsafe(
    `delete from idempotency_keys where ctid = any(array(
       select ctid from idempotency_keys where expires_at <= now() limit $1::int for update skip locked))
     returning 1`,
    [limit],
  );
  return rows.length;
}
