import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { insertActiveTenant } from '../../test/harness/tenant-fixture.ts';
import { createDb, type Db } from '../db/client.ts';
import { ValidationError } from '../errors.ts';
import { createSearchService, type SearchService } from './search.service.ts';

/** The search index against the run's PostgreSQL: BM25 full text, per tenant, under row-level security. */
describe('search service (full text)', () => {
  let db: Db;
  let search: SearchService;
  let tenantA: { tenantId: string };
  let tenantB: { tenantId: string };
  const suite = randomUUID().slice(0, 8);

  const createTenant = async (slug: string) => ({ tenantId: await insertActiveTenant(db.sql, slug) });

  /** The tenant's statistics as kept, and as counted again from its postings: they must agree. */
  async function statistics(tenantId: string) {
    const [kept] = await db.sql<{ chunks: number; terms: number }[]>`
      select coalesce(sum(chunk_count), 0)::int as chunks, coalesce(sum(term_total), 0)::int as terms from search_tenant_stats where tenant_id = ${tenantId}::uuid`;
    const [counted] = await db.sql<{ chunks: number; terms: number }[]>`
      select count(*)::int as chunks, coalesce(sum(term_count), 0)::int as terms from search_chunks where tenant_id = ${tenantId}::uuid`;
    const keptTerms = await db.sql<{ term: string; n: number }[]>`
      select term, sum(chunk_frequency)::int as n from search_term_stats where tenant_id = ${tenantId}::uuid group by term having sum(chunk_frequency) <> 0 order by term`;
    const countedTerms = await db.sql<{ term: string; n: number }[]>`
      select term, count(*)::int as n from search_postings where tenant_id = ${tenantId}::uuid group by term order by term`;
    return { kept: { ...kept, terms: keptTerms }, counted: { ...counted, terms: countedTerms } };
  }

  beforeAll(async () => {
    db = createDb(inject('databaseUrl'), { tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    search = createSearchService({ db });
    tenantA = await createTenant(`search-a-${suite}`);
    tenantB = await createTenant(`search-b-${suite}`);
    await search.replaceSource(tenantA, { kind: 'document', id: 'doc-heart', type: 'report' }, [
      { content: 'Cardiac arrest survival improved with early defibrillation in the study cohort.', metadata: { pageNumber: 1 } },
      { content: 'Patients receiving bystander CPR had higher survival to hospital discharge.', metadata: { pageNumber: 2 } },
    ]);
    await search.replaceSource(tenantA, { kind: 'document', id: 'doc-invoice', type: 'invoice' }, [
      { content: 'Invoice 2041 for consulting services, total due 1200 EUR by March.', metadata: { pageNumber: 1 } },
    ]);
    await search.replaceSource(tenantA, { kind: 'resource', id: 'res-1', type: 'project' }, [{ content: 'Defibrillation training project for hospital staff', metadata: {} }]);
  });
  afterAll(() => db?.close());

  it('ranks chunks by BM25 with scores in 0..1, best first, carrying citation metadata', async () => {
    const hits = await search.search(tenantA, { query: 'survival after cardiac arrest', mode: 'fulltext' });
    expect(hits.length).toBeGreaterThanOrEqual(2);
    expect(hits[0]).toMatchObject({ kind: 'document', sourceId: 'doc-heart', sourceType: 'report', chunkIndex: 0, metadata: { pageNumber: 1 } });
    expect(hits[0]!.content).toContain('Cardiac arrest');
    for (const hit of hits) {
      expect(hit.score).toBeGreaterThan(0);
      expect(hit.score).toBeLessThanOrEqual(1);
    }
    expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
    expect(hits.some((h) => h.sourceId === 'doc-invoice')).toBe(false);
  });

  it('weighs a rare term above a common one', async () => {
    // "survival" is in two chunks, "defibrillation" in two, "cpr" in one: the chunk with the rare term wins.
    const hits = await search.search(tenantA, { query: 'survival CPR', mode: 'fulltext' });
    expect(hits[0]).toMatchObject({ sourceId: 'doc-heart', chunkIndex: 1 });
  });

  it('replaces a source idempotently: twice leaves one copy, and the statistics agree with the index', async () => {
    const source = { kind: 'document', id: 'doc-twice', type: 'letter' } as const;
    const chunks = [{ content: 'Dear committee, the zeppelin museum opens in spring.', metadata: { section: 'intro' } }];
    expect(await search.replaceSource(tenantA, source, chunks)).toEqual({ chunkCount: 1 });
    expect(await search.replaceSource(tenantA, source, chunks)).toEqual({ chunkCount: 1 });
    const hits = await search.search(tenantA, { query: 'zeppelin museum', mode: 'fulltext' });
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ sourceId: 'doc-twice', metadata: { section: 'intro' } });

    await search.replaceSource(tenantA, source, [
      { content: 'Dear committee, the airship hangar opens in spring.', metadata: {} },
      { content: 'Tickets go on sale in May.', metadata: {} },
    ]);
    expect(await search.search(tenantA, { query: 'zeppelin', mode: 'fulltext' })).toEqual([]);
    expect((await search.search(tenantA, { query: 'airship hangar tickets', mode: 'fulltext' })).map((h) => h.chunkIndex).sort()).toEqual([0, 1]);
    const stats = await statistics(tenantA.tenantId);
    expect(stats.kept).toEqual(stats.counted);
  });

  it('removes a source: its chunks and their statistics go', async () => {
    const source = { kind: 'document', id: 'doc-gone', type: 'memo' } as const;
    await search.replaceSource(tenantA, source, [{ content: 'Quokka sightings on Rottnest island', metadata: {} }]);
    expect(await search.search(tenantA, { query: 'quokka', mode: 'fulltext' })).toHaveLength(1);
    await search.removeSource(tenantA, { kind: 'document', id: 'doc-gone' });
    await search.removeSource(tenantA, { kind: 'document', id: 'doc-gone' });
    expect(await search.search(tenantA, { query: 'quokka', mode: 'fulltext' })).toEqual([]);
    const [terms] = await db.sql<{ n: number }[]>`
      select coalesce(sum(chunk_frequency), 0)::int as n from search_term_stats where tenant_id = ${tenantA.tenantId}::uuid and term = 'quokka'`;
    expect(terms!.n).toBe(0);
    const stats = await statistics(tenantA.tenantId);
    expect(stats.kept).toEqual(stats.counted);
  });

  it('confines every query to the caller tenant: B never sees A, and A\'s statistics do not move B\'s scores', async () => {
    expect(await search.search(tenantB, { query: 'cardiac arrest survival defibrillation', mode: 'fulltext' })).toEqual([]);
    await search.replaceSource(tenantB, { kind: 'document', id: 'doc-heart', type: 'report' }, [{ content: 'Cardiac rehabilitation after arrest', metadata: {} }]);
    const hitsB = await search.search(tenantB, { query: 'cardiac arrest', mode: 'fulltext' });
    expect(hitsB).toHaveLength(1);
    expect(hitsB[0]!.content).toBe('Cardiac rehabilitation after arrest');
    // The same source id in B is another source: A's chunks are untouched.
    expect((await search.search(tenantA, { query: 'cardiac arrest', mode: 'fulltext' }))[0]!.content).toContain('early defibrillation');
    // Removing in B removes nothing of A's.
    await search.removeSource(tenantB, { kind: 'document', id: 'doc-invoice' });
    expect(await search.search(tenantA, { query: 'invoice consulting', mode: 'fulltext' })).toHaveLength(1);
    // Row-level security holds whatever the SQL says: B's transaction reads none of A's rows.
    const [visible] = await db.inTenant(tenantB.tenantId, (tx) => tx<{ n: number }[]>`select count(*)::int as n from search_chunks where tenant_id = ${tenantA.tenantId}::uuid`);
    expect(visible!.n).toBe(0);
  });

  it('leaves out hits under minScore', async () => {
    const all = await search.search(tenantA, { query: 'hospital survival defibrillation', mode: 'fulltext' });
    expect(all.length).toBeGreaterThanOrEqual(2);
    const cut = (all[0]!.score + all.at(-1)!.score) / 2;
    const above = await search.search(tenantA, { query: 'hospital survival defibrillation', mode: 'fulltext', minScore: cut });
    expect(above.length).toBeGreaterThan(0);
    expect(above.length).toBeLessThan(all.length);
    for (const hit of above) expect(hit.score).toBeGreaterThanOrEqual(cut);
    expect(await search.search(tenantA, { query: 'hospital survival defibrillation', mode: 'fulltext', minScore: 1 })).toEqual([]);
  });

  it('filters by kind, type and source id, and honours limit', async () => {
    const query = 'defibrillation hospital';
    const kinds = new Set((await search.search(tenantA, { query, mode: 'fulltext' })).map((h) => h.kind));
    expect(kinds).toEqual(new Set(['document', 'resource']));
    expect((await search.search(tenantA, { query, mode: 'fulltext', kinds: ['resource'] })).map((h) => h.sourceId)).toEqual(['res-1']);
    expect((await search.search(tenantA, { query, mode: 'fulltext', types: ['report'] })).every((h) => h.sourceType === 'report')).toBe(true);
    expect((await search.search(tenantA, { query, mode: 'fulltext', types: ['invoice'] }))).toEqual([]);
    expect((await search.search(tenantA, { query, mode: 'fulltext', sourceIds: ['res-1', 'nothing'] })).map((h) => h.sourceId)).toEqual(['res-1']);
    expect(await search.search(tenantA, { query, mode: 'fulltext', limit: 1 })).toHaveLength(1);
  });

  it('answers a query of stop words only with no hits, and refuses bad input with the field named', async () => {
    expect(await search.search(tenantA, { query: 'the and of', mode: 'fulltext' })).toEqual([]);
    await expect(search.search(tenantA, { query: '  ' })).rejects.toMatchObject({ details: { field: 'query' } });
    await expect(search.search(tenantA, { query: 'x', limit: 0 })).rejects.toBeInstanceOf(ValidationError);
    await expect(search.search(tenantA, { query: 'x', minScore: 2 })).rejects.toMatchObject({ details: { field: 'minScore' } });
    await expect(search.search(tenantA, { query: 'x', kinds: ['folder' as never] })).rejects.toMatchObject({ details: { field: 'kinds.0' } });
    await expect(search.replaceSource(tenantA, { kind: 'folder' as never, id: 'x', type: 't' }, [])).rejects.toMatchObject({ details: { field: 'kind' } });
  });

  it('stores text with NUL characters by dropping them', async () => {
    await search.replaceSource(tenantA, { kind: 'document', id: 'doc-nul', type: 'txt' }, [{ content: 'binary\u0000 wombat residue', metadata: { note: 'a\u0000b' } }]);
    const [hit] = await search.search(tenantA, { query: 'wombat', mode: 'fulltext' });
    expect(hit).toMatchObject({ content: 'binary wombat residue', metadata: { note: 'ab' } });
  });
});
