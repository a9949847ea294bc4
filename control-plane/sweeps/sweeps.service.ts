import type { Db, Tx } from '../db/client.ts';
import { allTenantIds, claimSweep } from './sweeps.repo.ts';

/** Periodic clean-up that no request is waiting for. */
export interface Sweep {
  name: string;
  /** How often it runs, across all processes together. */
  everyMs: number;
  /** Answers how many things it removed. */
  run(): Promise<number>;
}

export type Sweeps = ReturnType<typeof createSweeps>;

/** How often each process asks whether a sweep is due: one cheap statement per sweep. */
const CHECK_MS = 60_000;

const isClosedPool = (error: unknown) => ['CONNECTION_ENDED', 'CONNECTION_DESTROYED'].includes((error as { code?: string } | null)?.code ?? '');

/**
 * Runs the platform's sweeps on a schedule (docs/decisions/0148-scheduled-sweeps.md): every
 * process checks each minute, and a sweep due runs in the one process that claims its row in
 * `scheduled_sweeps`, so that it runs once per interval however many processes there are. A sweep
 * that fails is logged and runs again at its next turn.
 */
export function createSweeps(deps: { db: Db; sweeps: Sweep[]; checkMs?: number; log?: (message: string, detail?: unknown) => void }) {
  const log = deps.log ?? ((message: string, detail?: unknown) => console.error(`[sweeps] ${message}`, detail ?? ''));
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  let running: Promise<unknown> | undefined;

  /** Runs each sweep that is due and that this process claims; answers what each removed. */
  async function runDue(): Promise<Record<string, number>> {
    const done: Record<string, number> = {};
    for (const sweep of deps.sweeps) {
      try {
        if (!(await deps.db.system((tx) => claimSweep(tx, sweep.name, sweep.everyMs)))) continue;
        done[sweep.name] = await sweep.run();
      } catch (error) {
        if (isClosedPool(error)) break;
        log(`sweep ${sweep.name} failed; it runs again at its next turn`, error);
      }
    }
    return done;
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = runDue().finally(() => schedule((deps.checkMs ?? CHECK_MS) * (0.75 + Math.random() / 2)));
    }, delayMs);
    timer.unref();
  }

  return {
    runDue,
    /** Starts this process's schedule (the first check a few seconds after start-up). */
    start(): void {
      if (!stopped) return;
      stopped = false;
      schedule(5_000 * Math.random());
    },
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/** The sweep of every tenant's staged uploads that never became documents (`documents.sweepStaleUploads`). */
export function staleUploadsSweep(db: Db, sweepTenant: (tenantId: string) => Promise<string[]>, everyMs: number): Sweep {
  return {
    name: 'stale-uploads',
    everyMs,
    async run() {
      let removed = 0;
      for (const tenantId of await db.system((tx) => allTenantIds(tx))) removed += (await sweepTenant(tenantId)).length;
      return removed;
    },
  };
}

/** Runs `deleteBatch` (a thousand rows per transaction, on the owner pool) until a batch comes back short; answers how many it removed. */
export async function deleteInBatches(db: Db, deleteBatch: (tx: Tx, limit: number) => Promise<number>): Promise<number> {
  let removed = 0;
  for (;;) {
    const deleted = await db.system((tx) => deleteBatch(tx, 1000));
    removed += deleted;
    if (deleted < 1000) return removed;
  }
}
