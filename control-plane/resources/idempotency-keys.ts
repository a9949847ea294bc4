import { createHash } from 'node:crypto';
import type { Db, Tx } from '../db/client.ts';
import { ConflictError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { canonicalJson } from '../json/same-json.ts';
import { claimIdempotencyKey, deleteExpiredIdempotencyKeys, deleteExpiredIdempotencyKeysOfAllTenants, findIdempotencyKey, saveIdempotentResponse } from './idempotency-keys.repo.ts';

/** What a key stands for: the operation and its input (the key itself left out), as JSON. */
export interface IdempotentRequest {
  operation: string;
  input: unknown;
}

const fingerprintOf = (request: IdempotentRequest) => createHash('sha256').update(canonicalJson(request)).digest('hex');

/**
 * Runs `work` in the caller's tenant transaction `tx` at most once per `Idempotency-Key` of this
 * tenant and caller: the first request under a key does it and its answer is kept for 24 hours;
 * a later one with the same request gets that answer without doing anything, one with another
 * request is a 409. Concurrent requests under one key wait for the first to end, so exactly one
 * does the work. The key and the work commit together: a request that fails leaves the key free.
 * Without a key, `work` simply runs.
 */
export async function idempotently<T>(tx: Tx, actor: Actor, key: string | undefined, request: IdempotentRequest, work: () => Promise<T>): Promise<T> {
  if (key === undefined) return work();
  const fingerprint = fingerprintOf(request);
  // A held key can expire, or its holder roll back, between the claim and the read: claim again then.
  for (let attempt = 1; ; attempt++) {
    if (await claimIdempotencyKey(tx, actor.userId, key, fingerprint)) break;
    const held = await findIdempotencyKey(tx, actor.userId, key);
    if (held && held.fingerprint !== fingerprint) {
      throw new ConflictError('this Idempotency-Key was used with another request: send a new key for a new request', { field: 'Idempotency-Key' });
    }
    if (held) return held.response as T;
    if (attempt === 3) throw new ConflictError('this Idempotency-Key is in use: retry the request', { field: 'Idempotency-Key' });
  }
  const response = await work();
  await saveIdempotentResponse(tx, actor.userId, key, response);
  await deleteExpiredIdempotencyKeys(tx);
  return response;
}

/** Removes every tenant's expired keys, a thousand per transaction (the scheduled sweep: control-plane/sweeps); answers how many. */
export async function sweepExpiredIdempotencyKeys(db: Db): Promise<number> {
  let removed = 0;
  for (;;) {
    const deleted = await db.system((tx) => deleteExpiredIdempotencyKeysOfAllTenants(tx, 1000));
    removed += deleted;
    if (deleted < 1000) return removed;
  }
}
