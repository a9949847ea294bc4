import type { Db } from '../db/client.ts';
import { isInputRefused, type Embedder } from './embeddings.ts';
import { claimBacklogChunks, nextBacklogLeaseEnd, nextBacklogTenant, refuseChunk, releaseChunks, sourceChunkIds, type PendingChunk } from './search.repo.ts';
import type { VectorStore } from './vector-store.ts';

/** Chunks the backlog claims and embeds at a time, of one tenant. */
const BATCH = 64;
/** How long a claim keeps other processes off its chunks: longer than embedding a batch takes. */
const LEASE_MS = 120_000;
/** Wait after a write before the backlog runs (so that the write has committed), and after failures. */
const DELAY_MS = 20;
const RETRY_MS = [1_000, 5_000, 30_000];
/** How long after another process's claim ends the backlog looks at its chunks again (a clock's skew between processes and the database). */
const LEASE_END_MARGIN_MS = 250;

/** A pool that has been closed: work still scheduled for it stops quietly. */
function isClosedPool(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === 'CONNECTION_ENDED' || code === 'CONNECTION_DESTROYED';
}

/**
 * The embedding backlog (docs/decisions/0147-fair-embedding-backlog.md): chunks written without
 * vectors (resource projections, written in the resource's own transaction, or any write whose
 * embedding failed) get them shortly after. Tenants take turns, a batch each, so that one tenant's
 * backlog cannot hold up another's; a batch is claimed with `FOR UPDATE SKIP LOCKED` and a lease,
 * so that two processes never embed the same chunks. A batch the model refuses as input (400, 413,
 * 422) is split until the chunk it refuses is found: that chunk is parked with the model's answer
 * (`embedding_refused`, which the storage doctor reports) and the others are embedded. Any other
 * failure (the model unreachable, 5xx, 429, a wrong key or model) retries the backlog with backoff.
 * A run that leaves chunks claimed by another process runs again when the first of those claims
 * ends: chunks of a process killed mid-batch are embedded once its lease is over, with no write or
 * restart to wake the backlog (their process, alive, has embedded them by then, and the run finds
 * nothing).
 */
export function createEmbeddingBacklog(deps: {
  db: Db;
  embedder: Embedder;
  store: () => Promise<VectorStore | undefined>;
  batch?: number;
  log: (message: string, detail?: unknown) => void;
}) {
  const { db, embedder, log } = deps;
  const batch = deps.batch ?? BATCH;
  /** The last tenant served: the next turn goes to the one after it. */
  let cursor: string | null = null;
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let again = false;
  let failures = 0;

  async function nextTenant(): Promise<string | undefined> {
    const next = await db.system((tx) => nextBacklogTenant(tx, cursor));
    if (next || cursor === null) return next;
    cursor = null;
    return db.system((tx) => nextBacklogTenant(tx, null));
  }

  /** Embeds claimed chunks of one tenant; a refused batch is split, and a refused single chunk parked. */
  async function embedClaimed(store: VectorStore, tenantId: string, chunks: PendingChunk[]): Promise<void> {
    let vectors: number[][];
    try {
      vectors = await embedder.embed(chunks.map((c) => c.content));
    } catch (error) {
      if (!isInputRefused(error)) throw error;
      if (chunks.length === 1) {
        const reason = error instanceof Error ? error.message : String(error);
        log(`the embedding model refused chunk ${chunks[0]!.chunkId} of ${chunks[0]!.kind} ${chunks[0]!.sourceId}; it is parked`, reason);
        await db.inTenant(tenantId, (tx) => refuseChunk(tx, chunks[0]!.chunkId, reason));
        return;
      }
      const half = Math.ceil(chunks.length / 2);
      await embedClaimed(store, tenantId, chunks.slice(0, half));
      await embedClaimed(store, tenantId, chunks.slice(half));
      return;
    }
    for (const dimensions of new Set(vectors.map((v) => v.length))) await store.prepare(embedder.model, dimensions);
    const sources = new Map(chunks.map((chunk) => [`${chunk.kind}\u0000${chunk.sourceId}`, { kind: chunk.kind, id: chunk.sourceId }]));
    const kept = await db.inTenant(tenantId, async (tx) => {
      await store.save(tx, tenantId, embedder.model, chunks.map((chunk, i) => ({ ...chunk, vector: vectors[i]! })));
      return Promise.all([...sources.values()].map(async (source) => ({ source, ids: await sourceChunkIds(tx, source) })));
    });
    for (const { source, ids } of kept) await store.forgetSource(tenantId, source, ids);
  }

  /** Serves tenants in turn, a batch each, until none has chunks left that this process can claim. */
  async function drain(): Promise<void> {
    const store = await deps.store();
    if (!store) return;
    const idle = new Set<string>();
    for (;;) {
      const tenantId = await nextTenant();
      if (!tenantId || idle.has(tenantId)) return;
      cursor = tenantId;
      const claimed = await db.inTenant(tenantId, (tx) => claimBacklogChunks(tx, batch, LEASE_MS));
      if (claimed.length === 0) {
        idle.add(tenantId);
        continue;
      }
      idle.clear();
      try {
        await embedClaimed(store, tenantId, claimed);
      } catch (error) {
        await db.inTenant(tenantId, (tx) => releaseChunks(tx, claimed.map((c) => c.chunkId))).catch(() => {});
        throw error;
      }
    }
  }

  async function run(): Promise<void> {
    running = true;
    try {
      do {
        again = false;
        await drain();
      } while (again);
      failures = 0;
    } catch (error) {
      if (isClosedPool(error)) return;
      const delay = RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]!;
      log(`embedding the backlog failed; retrying in ${delay / 1000} s`, error);
      running = false;
      kick(delay);
      return;
    } finally {
      running = false;
    }
    if (again) return kick();
    const leaseEndsIn = await db.system((tx) => nextBacklogLeaseEnd(tx)).catch((error: unknown) => {
      if (!isClosedPool(error)) log('reading the backlog claims of other processes failed; the next write runs the backlog', error);
      return undefined;
    });
    if (leaseEndsIn !== undefined) kick(leaseEndsIn + LEASE_END_MARGIN_MS);
  }

  /** Runs the backlog after `delayMs`, or once more after the run under way. */
  function kick(delayMs = DELAY_MS): void {
    if (running) {
      again = true;
      return;
    }
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void run();
    }, delayMs);
    timer.unref();
  }

  return {
    kick,
    /** Drains the backlog here, then waits for other processes' claims to end too, until no chunk is left to embed (tests, benchmarks). */
    async drainAll(): Promise<void> {
      for (;;) {
        await drain();
        if (!(await deps.store()) || (await db.system((tx) => nextBacklogLeaseEnd(tx))) === undefined) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}
