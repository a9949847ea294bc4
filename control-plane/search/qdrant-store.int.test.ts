import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { insertActiveTenant } from '../../test/harness/tenant-fixture.ts';
import { createDb, type Db } from '../db/client.ts';
import { createLocalEmbedder, LOCAL_EMBEDDING_MODEL } from './embeddings.ts';
import { createQdrantStore } from './qdrant-store.ts';
import { createSearchService, type SearchService } from './search.service.ts';
import { cosine } from './vector-store.ts';
import { asyncListener } from '../../test/harness/async-listener.ts';

type Payload = Record<string, unknown>;
type Condition = { key?: string; match?: { value?: unknown; any?: unknown[] }; has_id?: number[] };
interface Filter {
  must?: Condition[];
  must_not?: Condition[];
  should?: Condition[];
}
interface Point {
  id: number;
  vector: number[];
  payload: Payload;
}

function holds(condition: Condition, point: Point): boolean {
  if (condition.has_id) return condition.has_id.includes(point.id);
  const value = point.payload[condition.key!];
  if (condition.match?.any) return condition.match.any.includes(value);
  return value === condition.match?.value;
}

function matches(filter: Filter | undefined, point: Point): boolean {
  if (!filter) return true;
  return (
    (filter.must ?? []).every((c) => holds(c, point)) &&
    !(filter.must_not ?? []).some((c) => holds(c, point)) &&
    (!filter.should?.length || filter.should.some((c) => holds(c, point)))
  );
}

/**
 * A local server implementing the Qdrant REST endpoints that `@qdrant/js-client-rest` calls here,
 * as Qdrant documents them (no Qdrant runs on this machine): `GET /` (version), `GET /collections`,
 * `GET /collections/{name}/exists`, `PUT /collections/{name}`, `PUT /collections/{name}/index`,
 * `PUT /collections/{name}/points`, `POST /collections/{name}/points/delete` and
 * `POST /collections/{name}/points/query`, with `must`/`must_not`/`should` filters of `match`
 * (value, any) and `has_id` conditions, cosine scores, and the `{result, status, time}` envelope.
 */
function startQdrantWireServer() {
  const collections = new Map<string, { size: number; distance: string; points: Map<number, Point>; indexes: Record<string, unknown> }>();
  const requests: { method: string; path: string; body: any }[] = [];
  const server = createServer(asyncListener(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const body = text ? JSON.parse(text) : undefined;
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ method: req.method!, path, body });
    const ok = (result: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ result, status: 'ok', time: 0.0001 }));
    };
    const fail = (status: number, error: string) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: { error }, time: 0 }));
    };
    if (req.method === 'GET' && path === '/') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ title: 'qdrant - vector search engine', version: '1.17.0', commit: 'wire-format-test' }));
    }
    if (req.method === 'GET' && path === '/collections') return ok({ collections: [...collections.keys()].map((name) => ({ name })) });
    const m = /^\/collections\/([^/]+)(\/.*)?$/.exec(path);
    if (!m) return fail(404, 'Not found');
    const name = decodeURIComponent(m[1]!);
    const rest = m[2] ?? '';
    const collection = collections.get(name);
    if (req.method === 'GET' && rest === '/exists') return ok({ exists: !!collection });
    if (req.method === 'PUT' && rest === '') {
      if (collection) return fail(409, `Wrong input: Collection \`${name}\` already exists!`);
      collections.set(name, { size: body.vectors.size, distance: body.vectors.distance, points: new Map(), indexes: {} });
      return ok(true);
    }
    if (!collection) return fail(404, `Not found: Collection \`${name}\` doesn't exist!`);
    const updated = () => ok({ operation_id: requests.length, status: 'completed' });
    if (req.method === 'PUT' && rest === '/index') {
      collection.indexes[body.field_name] = body.field_schema;
      return updated();
    }
    if (req.method === 'PUT' && rest === '/points') {
      for (const p of body.points as Point[]) {
        if (p.vector.length !== collection.size) return fail(400, `Wrong input: Vector dimension error: expected dim: ${collection.size}, got ${p.vector.length}`);
        collection.points.set(p.id, { id: p.id, vector: p.vector, payload: p.payload ?? {} });
      }
      return updated();
    }
    if (req.method === 'POST' && rest === '/points/delete') {
      for (const point of [...collection.points.values()]) {
        if (body.points ? body.points.includes(point.id) : matches(body.filter, point)) collection.points.delete(point.id);
      }
      return updated();
    }
    if (req.method === 'POST' && rest === '/points/query') {
      const scored = [...collection.points.values()]
        .filter((p) => matches(body.filter, p))
        .map((p) => ({ id: p.id, version: 0, score: cosine(p.vector, body.query), ...(body.with_payload ? { payload: p.payload } : {}) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, body.limit ?? 10);
      return ok({ points: scored });
    }
    return fail(404, 'Not found');
  }));
  return { server, collections, requests };
}

describe('search service with the Qdrant vector store (documented REST contract)', () => {
  let db: Db;
  let search: SearchService;
  let qdrant: ReturnType<typeof startQdrantWireServer>;
  let tenantA: { tenantId: string };
  let tenantB: { tenantId: string };
  const suite = randomUUID().slice(0, 8);
  const collectionName = `svc_chunks_${LOCAL_EMBEDDING_MODEL}_512`;
  const points = () => [...(qdrant.collections.get(collectionName)?.points.values() ?? [])];

  const createTenant = async (slug: string) => ({ tenantId: await insertActiveTenant(db.sql, slug) });

  beforeAll(async () => {
    qdrant = startQdrantWireServer();
    await new Promise<void>((resolve) => qdrant.server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(qdrant.server.address() as AddressInfo).port}`;
    db = createDb(inject('databaseUrl'), { tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    search = createSearchService({ db, embedder: createLocalEmbedder(), vectors: createQdrantStore({ url }), log: () => {} });
    tenantA = await createTenant(`qd-a-${suite}`);
    tenantB = await createTenant(`qd-b-${suite}`);
    await search.replaceSource(tenantA, { kind: 'document', id: 'garden', type: 'note' }, [
      { content: 'Tomatoes need full sun and regular watering through the summer.', metadata: { pageNumber: 1 } },
      { content: 'Prune the roses in late winter before new growth starts.', metadata: { pageNumber: 2 } },
    ]);
  });
  afterAll(async () => {
    await db?.close();
    await new Promise<void>((resolve) => qdrant.server.close(() => resolve()));
  });

  it('makes a cosine collection with a tenant index, and stores a point per chunk with its tenant, kind, source and type', async () => {
    const collection = qdrant.collections.get(collectionName)!;
    expect(collection).toMatchObject({ size: 512, distance: 'Cosine', indexes: { tenant_id: { type: 'keyword', is_tenant: true } } });
    const stored = points().filter((p) => p.payload.tenant_id === tenantA.tenantId);
    expect(stored.map((p) => p.payload).sort((a, b) => String(a.source_id).localeCompare(String(b.source_id)))).toEqual([
      { tenant_id: tenantA.tenantId, kind: 'document', source_id: 'garden', source_type: 'note' },
      { tenant_id: tenantA.tenantId, kind: 'document', source_id: 'garden', source_type: 'note' },
    ]);
    const rows = await db.sql<{ id: string; model: string; dimensions: number; embedding: unknown }[]>`
      select id::text as id, embedding_model as model, embedding_dimensions as dimensions, embedding from search_chunks where tenant_id = ${tenantA.tenantId}::uuid order by id`;
    expect(rows.map((r) => ({ model: r.model, dimensions: r.dimensions, embedding: r.embedding }))).toEqual([
      { model: LOCAL_EMBEDDING_MODEL, dimensions: 512, embedding: null },
      { model: LOCAL_EMBEDDING_MODEL, dimensions: 512, embedding: null },
    ]);
    expect(stored.map((p) => String(p.id)).sort()).toEqual(rows.map((r) => r.id).sort());
  });

  it('answers vector and hybrid queries from Qdrant, every request filtered on the caller tenant', async () => {
    qdrant.requests.length = 0;
    const vector = await search.search(tenantA, { query: 'growing vegetables in sunshine', mode: 'vector', limit: 1 });
    expect(vector).toEqual([expect.objectContaining({ sourceId: 'garden', chunkIndex: 0, metadata: { pageNumber: 1 } })]);
    const hybrid = await search.search(tenantA, { query: 'when to prune roses' });
    expect(hybrid[0]).toMatchObject({ sourceId: 'garden', chunkIndex: 1 });
    const queries = qdrant.requests.filter((r) => r.path.endsWith('/points/query'));
    expect(queries.length).toBeGreaterThanOrEqual(2);
    for (const q of queries) expect(q.body.filter.must).toContainEqual({ key: 'tenant_id', match: { value: tenantA.tenantId } });
  });

  it('never lets tenant B reach tenant A: its queries filter on B, and a point claiming B for A\'s chunk matches no row of B', async () => {
    expect(await search.search(tenantB, { query: 'tomatoes in the sun', mode: 'vector' })).toEqual([]);
    const [aPoint] = points().filter((p) => p.payload.tenant_id === tenantA.tenantId);
    // Defence in depth: a point wrongly labelled with B, for A's chunk, is returned by Qdrant to B's
    // query, and still yields no hit: B's transaction reads no row of A's (row-level security).
    const stored = qdrant.collections.get(collectionName)!.points;
    stored.set(aPoint!.id, { ...aPoint!, payload: { ...aPoint!.payload, tenant_id: tenantB.tenantId } });
    qdrant.requests.length = 0;
    expect(await search.search(tenantB, { query: 'tomatoes in the sun', mode: 'vector' })).toEqual([]);
    expect(qdrant.requests.some((r) => r.path.endsWith('/points/query'))).toBe(true);
    stored.set(aPoint!.id, aPoint!);
  });

  it('replacing a source drops its old points; removing it drops the rest, in the tenant only', async () => {
    const source = { kind: 'resource', id: 'r-1', type: 'task' } as const;
    await search.replaceSource(tenantA, source, [{ content: 'Paint the fence', metadata: {} }]);
    await search.replaceSource(tenantB, source, [{ content: 'Paint the fence', metadata: {} }]);
    const first = points().filter((p) => p.payload.source_id === 'r-1' && p.payload.tenant_id === tenantA.tenantId);
    expect(first).toHaveLength(1);
    await search.replaceSource(tenantA, source, [{ content: 'Paint the fence green', metadata: {} }, { content: 'Buy brushes', metadata: {} }]);
    const second = points().filter((p) => p.payload.source_id === 'r-1' && p.payload.tenant_id === tenantA.tenantId);
    expect(second).toHaveLength(2);
    expect(second.map((p) => p.id)).not.toContain(first[0]!.id);
    await search.removeSource(tenantA, { kind: 'resource', id: 'r-1' });
    expect(points().filter((p) => p.payload.source_id === 'r-1').map((p) => p.payload.tenant_id)).toEqual([tenantB.tenantId]);
    for (const d of qdrant.requests.filter((r) => r.path.endsWith('/points/delete'))) expect(d.body.filter.must[0]).toMatchObject({ key: 'tenant_id' });
  });
});
