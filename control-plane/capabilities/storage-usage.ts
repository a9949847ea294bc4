import type { BlobStore } from '../blobs/blob-store.ts';
import type { CapabilitiesService } from './capabilities.service.ts';
import type { Db } from '../db/client.ts';
import { StorageQuotaError } from '../errors.ts';
import { systemActor } from '../identity/system-actor.ts';

/** A tenant's storage quota (storage.blob's `maxStoredBytes`) and the bytes it stores now. */
export interface StorageAllowance {
  quotaBytes: number;
  usedBytes: number;
}

export type StorageUsage = ReturnType<typeof createStorageUsage>;

/**
 * The bytes each tenant keeps in the blob store, counted as objects are written and removed (see
 * `meteredBlobStore`), against its plan's quota. The count is shared by every instance (one row
 * per tenant); uploads running at the same moment may each see the same room, so the quota can be
 * passed by what they hold together, never by more.
 */
export function createStorageUsage(deps: { db: Db; capabilities: Pick<CapabilitiesService, 'evaluate'> }) {
  const { db } = deps;
  return {
    /** Adds `bytes` (negative: removes them) to the tenant's count. */
    async add(tenantId: string, bytes: number): Promise<void> {
      if (bytes === 0) return;
      await db.inTenant(tenantId, (tx) =>
        tx`insert into tenant_storage_usage (tenant_id, bytes) values (current_tenant_id(), greatest(0, ${bytes}::bigint))
           on conflict (tenant_id) do update set bytes = greatest(0, tenant_storage_usage.bytes + ${bytes}::bigint)`,
      );
    },

    /** The tenant's quota and the bytes it stores; undefined when its plan sets no quota. */
    async allowance(tenantId: string): Promise<StorageAllowance | undefined> {
      const decision = (await deps.capabilities.evaluate(systemActor(tenantId), { capabilities: ['storage.blob'], context: {} })).decisions['storage.blob']!;
      const quotaBytes = decision.limits.maxStoredBytes;
      if (quotaBytes === undefined) return undefined;
      const [row] = await db.inTenant(tenantId, (tx) => tx<{ bytes: string }[]>`select bytes::text as bytes from tenant_storage_usage where tenant_id = current_tenant_id()`);
      return { quotaBytes, usedBytes: Number(row?.bytes ?? 0) };
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
