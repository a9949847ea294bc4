import type { Db, Tx } from '../db/client.ts';
import type { ObjectType } from '../object-types/object-types.schema.ts';
import { resourcesCreatedAfter, tenantsWithResourcesOf, type CreationCursor } from './resources.repo.ts';

/** Resources read and projected at a time: one transaction of their tenant. */
const PAGE = 500;
/** How long a process's claim on a request lasts without renewal (it renews after every page). */
const LEASE_MS = 60_000;

/** The requests a migration makes when it changes a built-in type's search fields (object-types/reprojection-requests.ts). */
export interface ReprojectionRequests {
  /** Claims for `leaseMs` the requests no other process holds. */
  claim(leaseMs: number): Promise<{ key: string; requestedAt: string }[]>;
  /** Extends the claim; false when it lapsed. */
  renew(key: string, requestedAt: string, leaseMs: number): Promise<boolean>;
  /** Clears the request made at `requestedAt` and the claim; one made since stays. */
  done(key: string, requestedAt: string): Promise<void>;
  /** Whether any request is left, claimed or not. */
  pending(): Promise<boolean>;
}

/** The search index's side: brings resources' projections to their type's search fields, writing only those that differ. */
export interface ProjectionRefresh {
  refreshed(tx: Tx, objectType: ObjectType, resources: readonly { id: string; data: Record<string, unknown> }[]): Promise<number>;
}

export interface SearchReprojection {
  /**
   * At start-up: for each built-in type a migration asked for, brings the search projection of
   * its resources in every tenant to its search fields, a page at a time in the tenant's own
   * transaction, then clears the request; answers what it did. One process at a time does a
   * request (a claim renewed after every page); while another holds one, this process looks again
   * once that claim could have lapsed, so a request whose process stopped is taken over.
   */
  resume(): Promise<{ key: string; tenants: number; written: number }[]>;
  /** Stops the work under way after its current page (closing); its claim lapses. */
  stop(): Promise<void>;
}

/**
 * Search projections of built-in types brought to their search fields after a migration changed
 * those (docs/decisions/0181-search-projections-backfilled-at-start-up.md): a resource's projection
 * is otherwise written only by its own writes, so rows written before the change would stay
 * unsearchable until written again. Idempotent: a projection already current is left as it is
 * (its chunk and vector kept), so work taken over from a stopped process only writes what is missing.
 */
export function createSearchReprojection(deps: {
  db: Db;
  requests: ReprojectionRequests;
  /** The type of a key as the transaction's tenant sees it (its own type of that key first). */
  findType: (tx: Tx, key: string) => Promise<ObjectType | undefined>;
  searchIndex: ProjectionRefresh;
  log?: (message: string, error?: unknown) => void;
  /** How long a claim lasts (tests); default a minute. */
  leaseMs?: number;
}): SearchReprojection {
  const { db, requests, findType, searchIndex } = deps;
  const leaseMs = deps.leaseMs ?? LEASE_MS;
  const log = deps.log ?? ((message: string, error?: unknown) => console.error(`[search] ${message}`, error ?? ''));
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  let retry: NodeJS.Timeout | undefined;

  /** Projects the tenant's resources of built-in type `key`; false when stopped or the claim lapsed. */
  async function reprojectTenant(request: { key: string; requestedAt: string }, tenantId: string, count: { written: number }): Promise<boolean> {
    for (let after: CreationCursor | null = null; ; ) {
      if (stopped) return false;
      const cursor: CreationCursor | null = after;
      const step = await db.inTenant(tenantId, async (tx) => {
        const objectType = await findType(tx, request.key);
        // A type of the tenant's own under that key: its resources are its own type's, projected by its writes.
        if (!objectType?.builtIn) return { written: 0, next: null };
        const { page, next } = await resourcesCreatedAfter(tx, request.key, cursor, PAGE);
        return { written: await searchIndex.refreshed(tx, objectType, page), next };
      });
      count.written += step.written;
      if (!(await requests.renew(request.key, request.requestedAt, leaseMs))) return false;
      if (!step.next) return true;
      after = step.next;
    }
  }

  async function resumeClaimed(): Promise<{ key: string; tenants: number; written: number }[]> {
    const done: { key: string; tenants: number; written: number }[] = [];
    for (const request of await requests.claim(leaseMs)) {
      const tenants = await db.system((tx) => tenantsWithResourcesOf(tx, request.key));
      const count = { written: 0 };
      let finished = true;
      for (const tenantId of tenants) if (!(finished = await reprojectTenant(request, tenantId, count))) break;
      if (!finished) return done;
      await requests.done(request.key, request.requestedAt);
      done.push({ key: request.key, tenants: tenants.length, written: count.written });
    }
    if (!stopped && (await requests.pending())) {
      retry = setTimeout(() => {
        running = resumeClaimed().then(
          (later) => later.forEach(({ key, tenants, written }) => log(`projected ${written} ${key} resource(s) of ${tenants} tenant(s) for search`)),
          (error: unknown) => log('projecting resources for search after a change of their search fields failed', error),
        );
      }, leaseMs);
      retry.unref();
    }
    return done;
  }

  return {
    resume() {
      const result = resumeClaimed();
      running = result.catch(() => undefined);
      return result;
    },
    async stop() {
      stopped = true;
      clearTimeout(retry);
      await running;
    },
  };
}
