import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { startEmbeddingsEndpoint } from '../../test/harness/openai-embeddings-endpoint.ts';
import { insertActiveTenant } from '../../test/harness/tenant-fixture.ts';
import { createDatabase, dropDatabase } from '../../scripts/stack/postgres.ts';
import { createLocalDirectoryBlobStore } from '../blobs/local-directory.ts';
import { createDb, type Db } from '../db/client.ts';
import { migrate } from '../app/migrate.ts';
import { systemActor } from '../identity/system-actor.ts';
import { createStorageService } from '../storage/storage.service.ts';
import { createOpenAiEmbedder } from './embeddings.ts';
import { createPgvectorStore } from './pgvector-store.ts';
import { createSearchService, type SearchService } from './search.service.ts';

/**
 * The embedding backlog against an OpenAI-compatible embeddings endpoint (a local server speaking
 * its documented wire format: no such model runs here) and pgvector, in a database of its own: the
 * backlog serves every tenant of its database, so no other test's chunks may be in it.
 */
describe('the embedding backlog: fair between tenants, poison-proof, one embedder per chunk', () => {
  const databaseName = `svc_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const adminUrl = Object.assign(new URL(inject('databaseUrl')), { pathname: '/postgres' }).toString();
  const dbs: Db[] = [];
  const urls = { database: '', tenant: '' };
  let endpoint: Awaited<ReturnType<typeof startEmbeddingsEndpoint>>;
  let writer: SearchService;
  let blobRoot: string;

  /** A process's search service with the endpoint's model and pgvector, on a pool of its own. */
  function embeddingProcess(): { db: Db; search: SearchService } {
    const db = createDb(urls.database, { tenantDatabaseUrl: urls.tenant });
    dbs.push(db);
    const embedder = createOpenAiEmbedder({ baseUrl: endpoint.baseUrl, model: 'backlog-test', retryBaseMs: 1 });
    return { db, search: createSearchService({ db, embedder, vectors: createPgvectorStore({ db }), log: () => {} }) };
  }
  /** Chunks of `texts` for one source of the tenant, stored without vectors. */
  const pending = (tenantId: string, source: string, texts: string[]) =>
    writer.replaceSource({ tenantId }, { kind: 'document', id: source, type: 'note' }, texts.map((content) => ({ content, metadata: {} })));

  const unembedded = async (tenantId: string) =>
    (await dbs[0]!.sql<{ n: number }[]>`select count(*)::int as n from search_chunks where tenant_id = ${tenantId}::uuid and embedding_model is null`)[0]!.n;

  beforeAll(async () => {
    urls.database = await createDatabase(adminUrl, databaseName);
    await migrate(urls.database);
    urls.tenant = Object.assign(new URL(inject('tenantDatabaseUrl')), { pathname: `/${databaseName}` }).toString();
    const db = createDb(urls.database, { tenantDatabaseUrl: urls.tenant });
    dbs.push(db);
    writer = createSearchService({ db, log: () => {} });
    endpoint = await startEmbeddingsEndpoint();
    blobRoot = await mkdtemp(join(tmpdir(), 'svc-backlog-'));
  });
  beforeEach(() => {
    endpoint.received.length = 0;
  });
  afterAll(async () => {
    for (const db of dbs) await db.close();
    await endpoint?.close();
    await dropDatabase(adminUrl, databaseName);
    await rm(blobRoot, { recursive: true, force: true });
  });

  it("serves tenants in turn: one tenant's long backlog does not keep another's chunk waiting behind it", async () => {
    const big = await insertActiveTenant(dbs[0]!.sql, `backlog-big-${randomBytes(3).toString('hex')}`);
    const small = await insertActiveTenant(dbs[0]!.sql, `backlog-small-${randomBytes(3).toString('hex')}`);
    await pending(big, 'manual', Array.from({ length: 256 }, (_, i) => `big tenant chunk ${i}`));
    await pending(small, 'note', ['small tenant chunk']);

    await embeddingProcess().search.drainBacklog();
    const requestOf = (match: (text: string) => boolean) => endpoint.received.flatMap((inputs, i) => (inputs.some(match) ? [i] : []));
    const bigRequests = requestOf((t) => t.startsWith('big tenant'));
    expect(bigRequests.length).toBeGreaterThanOrEqual(4);
    expect(requestOf((t) => t === 'small tenant chunk')[0]).toBeLessThan(bigRequests[1]!);
    expect(await unembedded(big)).toBe(0);
    expect(await unembedded(small)).toBe(0);
  });

  it('splits a batch the model refuses, parks the refused chunk with the reason, embeds the rest and every other tenant', async () => {
    const poisoned = await insertActiveTenant(dbs[0]!.sql, `backlog-poison-${randomBytes(3).toString('hex')}`);
    const other = await insertActiveTenant(dbs[0]!.sql, `backlog-other-${randomBytes(3).toString('hex')}`);
    await pending(poisoned, 'contract', Array.from({ length: 10 }, (_, i) => (i === 6 ? 'a chunk the model will refuse' : `contract clause ${i}`)));
    await pending(other, 'memo', ['memo one', 'memo two', 'memo three']);

    const { db, search } = embeddingProcess();
    await search.drainBacklog();
    const rows = await dbs[0]!.sql<{ content: string; model: string | null; refused: string | null }[]>`
      select content, embedding_model as model, embedding_refused as refused from search_chunks where tenant_id = ${poisoned}::uuid order by chunk_index`;
    expect(rows.filter((r) => r.model === 'backlog-test')).toHaveLength(9);
    const parked = rows.find((r) => r.content.includes('refuse'))!;
    expect(parked).toMatchObject({ model: null, refused: expect.stringMatching(/answered 400: input\[0\] is longer than the model's maximum context length/) });
    expect(await unembedded(other)).toBe(0);

    // Parked: not tried again by a later run.
    const asked = endpoint.received.length;
    await search.drainBacklog();
    expect(endpoint.received.length).toBe(asked);

    // The operator reads it in the storage doctor.
    const doctor = await createStorageService({ db, blobs: createLocalDirectoryBlobStore(blobRoot), refusedChunks: search.refusedChunks }).doctor(systemActor(poisoned));
    expect(doctor.checks.find((c) => c.name === 'embedding-refused')).toMatchObject({
      backend: 'search',
      result: 'warn',
      message: expect.stringMatching(/refused 1 chunk\(s\).*document contract: .*maximum context length/),
    });
  });

  it('never embeds a chunk twice when two processes drain the backlog at once', async () => {
    const tenant = await insertActiveTenant(dbs[0]!.sql, `backlog-shared-${randomBytes(3).toString('hex')}`);
    const texts = Array.from({ length: 400 }, (_, i) => `shared backlog chunk ${i}`);
    await pending(tenant, 'handbook', texts);

    await Promise.all([embeddingProcess().search.drainBacklog(), embeddingProcess().search.drainBacklog()]);
    const asked = endpoint.received.flat().filter((text) => text.startsWith('shared backlog chunk'));
    expect(asked.length).toBe(texts.length);
    expect(new Set(asked).size).toBe(texts.length);
    expect(await unembedded(tenant)).toBe(0);
  });

  it("embeds the chunks a killed process had claimed once its lease ends, with no write or restart to wake it", async () => {
    const tenant = await insertActiveTenant(dbs[0]!.sql, `backlog-orphan-${randomBytes(3).toString('hex')}`);
    await pending(tenant, 'orphaned', ['orphaned chunk one', 'orphaned chunk two']);
    // As a process killed while embedding them leaves them: claimed, the lease running for 2 s more.
    await dbs[0]!.sql`update search_chunks set embedding_lease_until = now() + interval '2 seconds' where tenant_id = ${tenant}::uuid`;

    // A process that is running: its start-up run finds nothing it may claim.
    embeddingProcess();
    const deadline = Date.now() + 15_000;
    while ((await unembedded(tenant)) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await unembedded(tenant)).toBe(0);
    const asked = endpoint.received.flat().filter((text) => text.startsWith('orphaned chunk'));
    expect(asked.sort()).toEqual(['orphaned chunk one', 'orphaned chunk two']);
  });
});
