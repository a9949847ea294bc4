import { setTimeout as sleep } from 'node:timers/promises';
import type { IndexBuild } from '../object-types/object-types.schema.ts';
import type { BackendDeps } from './backends/backend.ts';
import { applyIndexes, planIndexes } from './backends/postgresql.ts';
import { tenantsWithIndexWork } from './storage.repo.ts';

/** Waits before a failed build is tried again; after the last, the build counts as failed. */
const RETRY_DELAYS_MS = [1_000, 5_000];

interface Build {
  /** Another change arrived while this build ran: plan again when it ends. */
  again: boolean;
  /**
   * Started at start-up for work a stopped process left: an index whose lock another process holds
   * is left to that process (which is building or dropping it) instead of waited for. A change
   * arriving meanwhile makes the build wait like any other.
   */
  resumed: boolean;
  /** The index changes the build is carrying out, as `<type>.<field>`. */
  doing: string[];
}

export interface IndexBuilds {
  /** Starts building the tenant's declared indexes in the background, or asks a build under way to plan again; returns at once. */
  request(tenantId: string): void;
  /** Where each of the tenant's types' declared indexes stand, from one plan of them all. */
  statuses(tenantId: string): Promise<(objectType: string) => IndexBuild>;
  /** Resolves when no build of the tenant is under way (tests, shutdown). */
  settled(tenantId: string): Promise<void>;
  /**
   * At start-up: starts the builds that a stopped process left unfinished (an index claimed but
   * missing or invalid, a declaration never built), one tenant at a time; answers the tenants
   * whose builds it started.
   */
  resume(): Promise<string[]>;
}

/**
 * Builds the indexes that object types declare as soon as they declare them: each tenant's build
 * runs in the background of the process that took the change (`create index concurrently`, so
 * writes go on), one at a time per tenant, planning again while changes keep arriving. A build that
 * stops half way (a crash) leaves an invalid index, which the next plan rebuilds: `resume` at
 * start-up plans every tenant that may have such work and builds what is pending. The storage doctor
 * and the type's `indexBuild` show what is still pending, and `storage/sync-schema` finishes it too.
 */
export function createIndexBuilds(deps: BackendDeps, log: (message: string, error?: unknown) => void = () => {}): IndexBuilds {
  const builds = new Map<string, { build: Build; done: Promise<void> }>();
  const failures = new Map<string, string>();

  async function run(tenantId: string, build: Build): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        do {
          build.again = false;
          const plan = await planIndexes(deps, tenantId);
          build.doing = plan.changes.map((c) => `${c.objectType}.${c.field}`);
          await applyIndexes(deps, tenantId, plan, undefined, { unlessBusy: build.resumed });
        } while (build.again);
        return;
      } catch (error) {
        // A build can fail for a passing reason (a deadlock with other work on the table, a lost
        // connection): it is tried again, from a fresh plan, before it counts as failed.
        if (attempt >= RETRY_DELAYS_MS.length) throw error;
        log(`building the declared indexes of tenant ${tenantId} failed; trying again`, error);
        await sleep(RETRY_DELAYS_MS[attempt]);
      }
    }
  }

  function start(tenantId: string, resumed: boolean): void {
    const current = builds.get(tenantId);
    if (current) {
      if (resumed) return;
      current.build.again = true;
      current.build.resumed = false;
      return;
    }
    const build: Build = { again: false, resumed, doing: [] };
    const done = run(tenantId, build)
      .then(() => void failures.delete(tenantId))
      .catch((error: unknown) => {
        failures.set(tenantId, error instanceof Error ? error.message : String(error));
        log(`building the declared indexes of tenant ${tenantId} failed`, error);
      })
      .finally(() => builds.delete(tenantId));
    builds.set(tenantId, { build, done });
  }

  return {
    request: (tenantId) => start(tenantId, false),

    async resume() {
      const started: string[] = [];
      for (const tenantId of await deps.db.system((tx) => tenantsWithIndexWork(tx))) {
        if ((await planIndexes(deps, tenantId)).changes.length === 0) continue;
        start(tenantId, true);
        started.push(tenantId);
        // One tenant's builds at a time, as requests run them.
        while (builds.has(tenantId)) await builds.get(tenantId)!.done;
      }
      return started;
    },

    async statuses(tenantId) {
      const plan = await planIndexes(deps, tenantId);
      const building = builds.has(tenantId);
      const error = failures.get(tenantId) ?? null;
      return (objectType) => {
        const pending = plan.changes.filter((c) => c.objectType === objectType).map((c) => `${c.objectType}.${c.field}`);
        const skipped = plan.skipped.filter((s) => s.objectType === objectType).map((s) => `${s.objectType}.${s.field}: ${s.reason}`);
        if (pending.length === 0) return { state: 'ready', pending, skipped, error: null };
        if (building) return { state: 'building', pending, skipped, error: null };
        return { state: error ? 'failed' : 'pending', pending, skipped, error };
      };
    },

    async settled(tenantId) {
      while (builds.has(tenantId)) await builds.get(tenantId)!.done;
    },
  };
}
