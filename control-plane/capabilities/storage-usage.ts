import { randomUUID } from 'node:crypto';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { CapabilitiesService } from './capabilities.service.ts';
import type { Db, Tx } from '../db/client.ts';
import { StorageQuotaError } from '../errors.ts';
import { systemActor } from '../identity/system-actor.ts';

/** A tenant's storage quota (storage.blob's `maxStoredBytes`) and the bytes it stores now. */
export interface StorageAllowance {
  quotaBytes: number;
  usedBytes: number;
}

/** Room an upload holds of its tenant's storage quota while it streams (see `StorageUsage.reserve`). */
export interface StorageReservation {
  /**
   * Makes the reservation hold at least `bytes` in all, asking the database only when it holds
   * fewer; 413 (naming the quota) when what is stored and what other uploads hold leave no room.
   */
  cover(bytes: number): Promise<void>;
  /** Gives the room back, once the upload was written (and counted as stored) or failed. Idempotent. */
  release(): Promise<void>;
}

/** Past this, a reservation grows this much ahead of what was read, so that a large upload asks the database rarely. */
const RESERVATION_STEP_BYTES = 8 * 1024 * 1024;
/** A reservation of a process that ended stops counting after this long. */
const RESERVATION_TTL = '1 hour';

/**
 * Platform work: removes up to `limit` reservations of every tenant past their expiry, left by
 * processes that ended mid-upload (they no longer count against the quota). Answers how many.
 */
export async function deleteExpiredStorageReservations(tx: Tx, limit: number): Promise<number> {
  const rows = await tx.unsafe(
    `delete from tenant_storage_reservations where id = any(array(
       select id from tenant_storage_reservations where expires_at < now() limit $1::int for update skip locked))
     returning 1`,
    [limit],
  );
  return rows.length;
}

export type StorageUsage = ReturnType<typeof createStorageUsage>;

/**
 * The bytes each tenant keeps in the blob store, counted as objects are written and removed (see
 * `meteredBlobStore`), against its plan's quota. The count is shared by every instance (one row
 * per tenant). An upload reserves room as it streams (`reserve`), under a per-tenant lock, so
 * uploads running at the same moment never hold together more than the quota leaves.
 */
export function createStorageUsage(deps: { db: Db; capabilities: Pick<CapabilitiesService, 'evaluate'> }) {
  const { db } = deps;

  /** The tenant's quota and the bytes it stores; undefined when its plan sets no quota. */
  async function allowance(tenantId: string): Promise<StorageAllowance | undefined> {
    const decision = (await deps.capabilities.evaluate(systemActor(tenantId), { capabilities: ['storage.blob'], context: {} })).decisions['storage.blob']!;
    const quotaBytes = decision.limits.maxStoredBytes;
    if (quotaBytes === undefined) return undefined;
    const [row] = await db.inTenant(tenantId, (tx) => tx<{ bytes: string }[]>`select bytes::text as bytes from tenant_storage_usage where tenant_id = current_tenant_id()`);
    return { quotaBytes, usedBytes: Number(row?.bytes ?? 0) };
  }

  return {
    /** Adds `bytes` (negative: removes them) to the tenant's count. */
    async add(tenantId: string, bytes: number): Promise<void> {
      if (bytes === 0) return;
      await db.inTenant(tenantId, (tx) =>
        tx`insert into tenant_storage_usage (tenant_id, bytes) values (current_tenant_id(), greatest(0, ${bytes}::bigint))
           on conflict (tenant_id) do update set bytes = greatest(0, tenant_storage_usage.bytes + ${bytes}::bigint)`,
      );
    },

    allowance,

    /**
     * A reservation of room in the tenant's quota for one upload, holding nothing yet; undefined
     * when its plan sets no quota. `known`: the allowance the caller already looked up.
     */
    async reserve(tenantId: string, known?: StorageAllowance): Promise<StorageReservation | undefined> {
      const quota = known ?? (await allowance(tenantId));
      if (!quota) return undefined;
      const { quotaBytes } = quota;
      const id = randomUUID();
      let held = 0;
      let released = false;
      return {
        async cover(bytes) {
          if (bytes <= held) return;
          held = await db.inTenant(tenantId, async (tx) => {
            await tx`select pg_advisory_xact_lock(hashtext('svc.storage_quota'), hashtext(current_tenant_id()::text))`;
            await tx`delete from tenant_storage_reservations where tenant_id = current_tenant_id() and expires_at < now()`;
            const [row] = await tx<[{ stored: string; others: string }]>`
              select coalesce((select bytes from tenant_storage_usage where tenant_id = current_tenant_id()), 0)::text as stored,
                     coalesce((select sum(bytes) from tenant_storage_reservations where tenant_id = current_tenant_id() and id <> ${id}::uuid), 0)::text as others`;
            const room = quotaBytes - Number(row.stored) - Number(row.others);
            if (bytes > room) throw new StorageQuotaError(quotaBytes, Number(row.stored));
            // Ahead of what was read when there is room for it; exactly what was read near the quota.
            const ahead = Math.min(room, Math.max(bytes, Math.min(2 * held, bytes + RESERVATION_STEP_BYTES)));
            await tx`insert into tenant_storage_reservations (id, tenant_id, bytes, expires_at)
                     values (${id}::uuid, current_tenant_id(), ${ahead}, now() + ${RESERVATION_TTL}::interval)
                     on conflict (id) do update set bytes = excluded.bytes, expires_at = excluded.expires_at`;
            return ahead;
          });
        },
        async release() {
          if (released || held === 0) return;
          released = true;
          await db.inTenant(tenantId, (tx) => tx`delete from tenant_storage_reservations where id = ${id}::uuid`);
        },
      };
    },
  };
}

/** Refuses (413, naming the quota) `bytes` more than the allowance leaves room for. */
export function assertStorageRoom(allowance: StorageAllowance | undefined, bytes: number): void {
  if (allowance && allowance.usedBytes + bytes > allowance.quotaBytes) throw new StorageQuotaError(allowance.quotaBytes, allowance.usedBytes);
}

const TENANT_KEY = /^tenants\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\//;

/**
 * The blob store, counting the bytes of every object written or removed under a tenant's area in
 * that tenant's storage usage (a replaced object counts by the difference).
 */
export function meteredBlobStore(store: BlobStore, usage: Pick<StorageUsage, 'add'>): BlobStore {
  return {
    info: () => store.info(),
    get: (key) => store.get(key),
    read: (key) => store.read(key),
    head: (key) => store.head(key),
    list: (prefix, limit) => store.list(prefix, limit),
    async put(key, body) {
      const tenantId = TENANT_KEY.exec(key)?.[1];
      if (!tenantId) return store.put(key, body);
      const before = (await store.head(key))?.size ?? 0;
      let size = 0;
      if (typeof body === 'string') size = Buffer.byteLength(body);
      else if (body instanceof Uint8Array) size = body.byteLength;
      else {
        const source = body;
        body = (async function* () {
          for await (const chunk of source) {
            size += chunk.byteLength;
            yield chunk;
          }
        })();
      }
      await store.put(key, body);
      await usage.add(tenantId, size - before);
    },
    async delete(key) {
      const tenantId = TENANT_KEY.exec(key)?.[1];
      const before = tenantId ? await store.head(key) : undefined;
      const deleted = await store.delete(key);
      if (deleted && tenantId && before) await usage.add(tenantId, -before.size);
      return deleted;
    },
  };
}
