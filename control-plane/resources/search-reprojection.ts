import type { Db, Tx } from '../db/client.ts';
import type { ObjectType } from '../object-types/object-types.schema.ts';
import { resourcesCreatedAfter, tenantsWithResourcesOf, type CreationCursor } from './resources.repo.ts';

/** Resources read and projected at a time: one transaction of their tenant. */
const PAGE = 500;

/** The requests a migration makes when it changes a built-in type's search fields (object-types/reprojection-requests.ts). */
export interface ReprojectionRequests {
  pending(): Promise<{ key: string; requestedAt: string }[]>;
  /** Clears the request made at `requestedAt`; one made since stays. */
  done(key: string, requestedAt: string): Promise<void>;
}

/** The search index's side: brings resources' projections to their type's search fields, writing only those that differ. */
export interface ProjectionRefresh {
  refreshed(tx: Tx, objectType: ObjectType, resources: readonly { id: string; data: Record<string, unknown> }[]): Promise<number>;
}

export interface SearchReprojection {
  /**
   * At start-up: for each built-in type a migration asked for, brings the search projection of
   * its resources in every tenant to its search fields, a page at a time in the tenant's own
   * transaction, then clears the request; answers what it did. Stopped (`stop`) or failed, the
   * request stays and the next start goes through it again, skipping what is already current.
   */
  resume(): Promise<{ key: string; tenants: number; written: number }[]>;
  /** Stops a `resume` under way after its current page (closing). */
  stop(): Promise<void>;
}

/**
 * Search projections of built-in types brought to their search fields after a migration changed
 * those (docs/decisions/0181-search-projections-backfilled-at-start-up.md): a resource's projection
 * is otherwise written only by its own writes, so rows written before the change would stay
 * unsearchable until written again. Idempotent: a projection already current is left as it is
 * (its vector kept), so two processes starting together only repeat each other's reads.
 */
export function createSearchReprojection(deps: {
  db: Db;
  requests: ReprojectionRequests;
  /** The type of a key as the transaction's tenant sees it (its own type of that key first). */
  findType: (tx: Tx, key: string) => Promise<ObjectType | undefined>;
  searchIndex: ProjectionRefresh;
}): SearchReprojection {
  const { db, requests, findType, searchIndex } = deps;
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();

  /** Projects the tenant's resources of built-in type `key`; undefined when stopped before the end. */
  async function reprojectTenant(key: string, tenantId: string): Promise<number | undefined> {
    let written = 0;
    for (let after: CreationCursor | null = null; ; ) {
      if (stopped) return undefined;
      const cursor: CreationCursor | null = after;
      const step = await db.inTenant(tenantId, async (tx) => {
        const objectType = await findType(tx, key);
        // A type of the tenant's own under that key: its resources are its own type's, projected by its writes.
        if (!objectType?.builtIn) return { written: 0, next: null };
        const { page, next } = await resourcesCreatedAfter(tx, key, cursor, PAGE);
        return { written: await searchIndex.refreshed(tx, objectType, page), next };
      });
      written += step.written;
      if (!step.next) return written;
      after = step.next;
    }
  }

  async function resume(): Promise<{ key: string; tenants: number; written: number }[]> {
    const done: { key: string; tenants: number; written: number }[] = [];
    for (const { key, requestedAt } of await requests.pending()) {
      const tenants = await db.system((tx) => tenantsWithResourcesOf(tx, key));
      let written = 0;
      for (const tenantId of tenants) {
        const count = await reprojectTenant(key, tenantId);
        if (count === undefined) return done;
        written += count;
      }
      await requests.done(key, requestedAt);
      done.push({ key, tenants: tenants.length, written });
    }
    return done;
  }

  return {
    resume() {
      const result = resume();
      running = result.catch(() => undefined);
      return result;
    },
    async stop() {
      stopped = true;
      await running;
    },
  };
}
