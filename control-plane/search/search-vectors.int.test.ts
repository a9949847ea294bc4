import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { insertActiveTenant } from '../../test/harness/tenant-fixture.ts';
import { until } from '../../test/harness/until.ts';
import { createDb, type Db } from '../db/client.ts';
import { ValidationError } from '../errors.ts';
import { createLocalEmbedder, LOCAL_EMBEDDING_MODEL } from './embeddings.ts';
import { createPgvectorStore } from './pgvector-store.ts';
import { createSearchService, type SearchService } from './search.service.ts';

/**
 * Vector and hybrid search with the real parts: the offline sentence encoder and pgvector in the
 * run's PostgreSQL (the test cluster has the extension: scripts/stack/pgvector.ts).
 */
describe('search service (vectors in pgvector, offline embeddings)', () => {
  let db: Db;
  let search: SearchService;
  const embedder = createLocalEmbedder();
  let tenantA: { tenantId: string };
  let tenantB: { tenantId: string };
  const suite = randomUUID().slice(0, 8);

  const createTenant = async (slug: string) => ({ tenantId: await insertActiveTenant(db.sql, slug) });

  beforeAll(async () => {
    db = createDb(inject('databaseUrl'), { tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    search = createSearchService({ db, embedder, vectors: createPgvectorStore({ db }), log: () => {} });
    tenantA = await createTenant(`vec-a-${suite}`);
    tenantB = await createTenant(`vec-b-${suite}`);
    await search.replaceSource(tenantA, { kind: 'document', id: 'car', type: 'note' }, [
      { content: 'The automobile would not start on a freezing morning because its battery was flat.', metadata: { pageNumber: 1 } },
    ]);
    await search.replaceSource(tenantA, { kind: 'document', id: 'recipe', type: 'note' }, [
      { content: 'Whisk the eggs with sugar, fold in the flour and bake the sponge for twenty minutes.', metadata: { pageNumber: 3 } },
    ]);
  });
  afterAll(() => db?.close());

  it('runs on a database that has pgvector from template1 (the local setup creates it there as superuser)', async () => {
    const template = new URL(inject('databaseUrl'));
    template.pathname = '/template1';
    const admin = postgres(template.toString(), { max: 1, onnotice: () => {} });
    try {
      const [row] = await admin<{ version: string }[]>`select extversion as version from pg_extension where extname = 'vector'`;
      expect(row?.version).toMatch(/^0\.8\./);
    } finally {
      await admin.end();
    }
  });

  it('stores a vector per chunk with its model id and dimension', async () => {
    expect(await search.vectorsAvailable()).toBe(true);
    const rows = await db.sql<{ model: string; dimensions: number; length: number }[]>`
      select embedding_model as model, embedding_dimensions as dimensions, cardinality(embedding) as length
        from search_chunks where tenant_id = ${tenantA.tenantId}::uuid`;
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toEqual({ model: LOCAL_EMBEDDING_MODEL, dimensions: 512, length: 512 });
  });

  it('finds by meaning in vector mode what full text cannot find', async () => {
    const query = 'car engine trouble in winter';
    expect(await search.search(tenantA, { query, mode: 'fulltext' })).toEqual([]);
    const hits = await search.search(tenantA, { query, mode: 'vector', limit: 2 });
    expect(hits[0]).toMatchObject({ kind: 'document', sourceId: 'car', metadata: { pageNumber: 1 } });
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
    for (const hit of hits) {
      expect(hit.score).toBeGreaterThanOrEqual(0);
      expect(hit.score).toBeLessThanOrEqual(1);
    }
    expect(await search.search(tenantA, { query, mode: 'vector', minScore: hits[0]!.score })).toHaveLength(1);
  });

  it('fuses both modes in hybrid: matching terms and meaning, scores 0..1', async () => {
    const hits = await search.search(tenantA, { query: 'baking a cake with eggs' });
    expect(hits[0]).toMatchObject({ sourceId: 'recipe' });
    for (const hit of hits) {
      expect(hit.score).toBeGreaterThan(0);
      expect(hit.score).toBeLessThanOrEqual(1);
    }
    // A chunk sharing no term with the query still comes through its vector.
    expect((await search.search(tenantA, { query: 'vehicle breakdown', mode: 'hybrid' }))[0]).toMatchObject({ sourceId: 'car' });
    // A nearest neighbour with no term of the query and no positive similarity (cosine -0.02 here) is no match.
    expect((await search.search(tenantA, { query: 'Where is Apollo?', mode: 'hybrid' })).map((hit) => hit.sourceId)).toEqual(['car']);
  });

  it('confines vector and hybrid queries to the caller tenant', async () => {
    for (const mode of ['vector', 'hybrid'] as const) expect(await search.search(tenantB, { query: 'car engine trouble in winter', mode })).toEqual([]);
    await search.replaceSource(tenantB, { kind: 'document', id: 'car', type: 'note' }, [{ content: 'The automobile would not start on a freezing morning because its battery was flat.', metadata: {} }]);
    const hits = await search.search(tenantB, { query: 'car engine trouble in winter', mode: 'vector' });
    expect(hits).toHaveLength(1);
    const [owner] = await db.sql<{ tenant: string }[]>`select tenant_id::text as tenant from search_chunks where tenant_id = ${tenantB.tenantId}::uuid`;
    expect(owner!.tenant).toBe(tenantB.tenantId);
  });

  it('searches through the HNSW index of the model', async () => {
    const vector = (await embedder.embed(['x']))[0]!;
    const plan = await db.inTenant(tenantA.tenantId, async (tx) => {
      // The table is tiny: without these the planner may sort a few rows instead. Off, only an index that orders by distance serves.
      await tx`set local enable_seqscan = off`;
      await tx`set local enable_sort = off`;
      return tx.unsafe<{ 'QUERY PLAN': string }[]>(
        `explain select id from search_chunks c where c.embedding_model = '${LOCAL_EMBEDDING_MODEL}' and c.embedding_dimensions = 512
          order by (c.embedding::vector(512)) <=> $1::vector(512) limit 5`,
        [`[${vector.join(',')}]`],
      );
    });
    expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Index Scan using search_chunks_hnsw_/);
  });

  it('keeps the vector a chunk got first when another embedder saves it later', async () => {
    // Every process embeds the backlog; two may have read the same chunk while it had no vector.
    const stored = () =>
      db.sql<{ id: string; embedding: number[]; model: string }[]>`
        select id::text as id, embedding, embedding_model as model from search_chunks where tenant_id = ${tenantA.tenantId}::uuid and source_id = 'car'`;
    const [first] = await stored();
    const late = { chunkId: first!.id, kind: 'document', sourceId: 'car', sourceType: 'note', vector: Array.from({ length: 512 }, () => 0.5) };
    await db.inTenant(tenantA.tenantId, (tx) => createPgvectorStore({ db }).save(tx, tenantA.tenantId, LOCAL_EMBEDDING_MODEL, [late]));
    expect(await stored()).toEqual([first]);
  });

  it('removes the vectors with the source', async () => {
    await search.replaceSource(tenantA, { kind: 'document', id: 'temp', type: 'note' }, [{ content: 'A lighthouse keeper watches the stormy sea', metadata: {} }]);
    expect((await search.search(tenantA, { query: 'lighthouse by the ocean', mode: 'vector', limit: 1 }))[0]).toMatchObject({ sourceId: 'temp' });
    await search.removeSource(tenantA, { kind: 'document', id: 'temp' });
    expect((await search.search(tenantA, { query: 'lighthouse by the ocean', mode: 'vector' })).map((h) => h.sourceId)).not.toContain('temp');
  });

  it('embeds chunks written inside a caller transaction through the backlog, shortly after commit', async () => {
    const written = performance.now();
    await db.inTenant(tenantA.tenantId, (tx) => search.replaceSourceIn(tx, { kind: 'resource', id: 'res-vec', type: 'project' }, [{ content: 'Solar panel installation for the school roof', metadata: {} }]));
    // Full text at commit; the vector follows.
    expect(await search.search(tenantA, { query: 'solar panel', mode: 'fulltext' })).toHaveLength(1);
    await until(
      () => db.sql<{ model: string | null }[]>`select embedding_model as model from search_chunks where tenant_id = ${tenantA.tenantId}::uuid and source_id = 'res-vec'`,
      (rows) => rows[0]?.model === LOCAL_EMBEDDING_MODEL,
      30_000,
    );
    console.log(`resource projection embedded ${(performance.now() - written).toFixed(0)} ms after its write`);
    expect((await search.search(tenantA, { query: 'renewable energy for a building', mode: 'vector', limit: 1 }))[0]).toMatchObject({ sourceId: 'res-vec' });
  });

  it('without a vector store: hybrid is full text, vector is refused naming the field', async () => {
    const textOnly = createSearchService({ db, embedder: null, vectors: null });
    expect(await textOnly.vectorsAvailable()).toBe(false);
    const hybrid = await textOnly.search(tenantA, { query: 'battery flat morning' });
    expect(hybrid).toEqual(await textOnly.search(tenantA, { query: 'battery flat morning', mode: 'fulltext' }));
    expect(hybrid[0]).toMatchObject({ sourceId: 'car' });
    const refusal = await textOnly.search(tenantA, { query: 'battery', mode: 'vector' }).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(ValidationError);
    expect(refusal).toMatchObject({ details: { field: 'mode' } });
  });
});
