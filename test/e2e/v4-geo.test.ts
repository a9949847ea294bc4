import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { DEFAULT_ROLES } from '../../control-plane/auth/permissions.ts';
import { startTestStack, type TestStack } from '../harness/stack.ts';

const PLATFORM_ADMIN = 'platform@svc.test';

const point = (id: string | number, lon: number, lat: number, properties: Record<string, unknown> | null = {}) => ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [lon, lat] }, properties });
const collection = (...features: unknown[]) => ({ type: 'FeatureCollection', features });

/** Around Zürich: two points, a lake (polygon), a line whose box but not itself meets the old town, and Paris under a number id. */
const ZURICH = collection(
  point('hb', 8.5417, 47.3769, { name: 'Hauptbahnhof' }),
  point('opera', 8.5481, 47.3667, { name: 'Opernhaus' }),
  { type: 'Feature', id: 'lake', geometry: { type: 'Polygon', coordinates: [[[8.55, 47.3], [8.6, 47.3], [8.6, 47.35], [8.55, 47.35], [8.55, 47.3]]] }, properties: { kind: 'water' } },
  { type: 'Feature', id: 'diagonal', geometry: { type: 'LineString', coordinates: [[8.5, 47.37], [8.54, 47.41]] }, properties: null },
  point(42, 2.3522, 48.8566, { name: 'Paris' }),
);
const OLD_TOWN = '8.53,47.36,8.56,47.38';

/**
 * v4 geo through HTTP: place lookup against the GeoNames data the project ships, and tenant
 * datasets of GeoJSON features, with the `geo` capability, cross-tenant refusals and bad input.
 */
describe('v4 geo', () => {
  const suffix = randomBytes(4).toString('hex');
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  const user = (name: string, tenant: string) => ({ sub: randomUUID(), email: `geo-${name}-${suffix}@geo.test`, name: `Geo ${name}`, tenant });
  const tenants = { a: `geo-a-${suffix}`, b: `geo-b-${suffix}`, free: `geo-free-${suffix}` };
  const users = { a: user('a', tenants.a), reader: user('reader', tenants.a), b: user('b', tenants.b), free: user('free', tenants.free) };
  const ids: Record<keyof typeof tenants, string> = { a: '', b: '', free: '' };
  let stack: TestStack;

  beforeAll(async () => {
    for (const key of Object.keys(tenants) as Array<keyof typeof tenants>) {
      const plan = key === 'free' ? 'free' : 'enterprise';
      const [row] = await sql<{ id: string }[]>`insert into tenants (slug, name, home_region, plan) values (${tenants[key]}, ${tenants[key]}, 'eu', ${plan}) returning id::text as id`;
      ids[key] = row!.id;
      for (const [name, permissions] of Object.entries(DEFAULT_ROLES)) {
        await sql`insert into roles (tenant_id, name, permissions) values (${row!.id}::uuid, ${name}, ${permissions as string[]})`;
      }
    }
    // A role of tenant A's own that may read datasets and nothing else.
    await sql`insert into roles (tenant_id, name, permissions) values (${ids.a}::uuid, 'geo-reader', ${['resources.read']})`;
    for (const [key, member, roles] of [['a', users.a, ['admin']], ['a', users.reader, ['geo-reader']], ['b', users.b, ['admin']], ['free', users.free, ['admin']]] as const) {
      const [row] = await sql<{ id: string }[]>`insert into users (email, name) values (${member.email}, ${member.name}) returning id::text as id`;
      await sql`insert into memberships (tenant_id, user_id, roles) values (${ids[key]}::uuid, ${row!.id}::uuid, ${roles})`;
    }
    stack = await startTestStack({ devUsers: [...DEV_USERS, ...Object.values(users)] });
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  const datasets = (tenant: string) => `/v4/geo/datasets/${tenant}`;
  const features = (tenant: string, dataset: string, query = '') => `/v4/geo/datasets/${tenant}/${dataset}/features${query ? `?${query}` : ''}`;
  const featureIds = (page: any) => page.features.map((f: any) => f.id);

  it('resolves place names against the GeoNames gazetteer, ranked, with coordinates, country and population', async () => {
    const paris = await stack.request('POST', '/v4/geo/resolve-location', { as: users.a.email, body: { query: 'Paris' } });
    expect(paris.status, JSON.stringify(paris.body)).toBe(200);
    expect(paris.body.attribution).toMatch(/GeoNames.*CC BY/);
    expect(paris.body.data).toHaveLength(10);
    expect(paris.body.data[0]).toMatchObject({ geonameId: 2988507, name: 'Paris', countryCode: 'FR', countryName: 'France', featureCode: 'PPLC', match: 'exact' });
    expect(paris.body.data[0].lat).toBeCloseTo(48.85, 1);
    expect(paris.body.data[0].lon).toBeCloseTo(2.35, 1);
    expect(paris.body.data[0].population).toBeGreaterThan(2_000_000);
    const scores = paris.body.data.map((p: any) => p.score);
    expect(scores).toEqual([...scores].sort((x: number, y: number) => y - x));

    const qualified = await stack.request('POST', `/v4/geo/resolve-location?tenant_id=${tenants.a}`, { as: users.a.email, body: { query: 'Springfield, IL', limit: 3 } });
    expect(qualified.body.interpreted).toEqual({ name: 'Springfield', country: null, admin1: 'IL' });
    expect(qualified.body.data.map((p: any) => [p.countryCode, p.admin1Code])).toEqual([['US', 'IL']]);
    const inCountry = await stack.request('POST', '/v4/geo/resolve-location', { as: users.a.email, body: { tenant_id: ids.a, query: 'paris', country: 'us', limit: 5 } });
    expect(inCountry.body.data.length).toBe(5);
    expect(inCountry.body.data.every((p: any) => p.countryCode === 'US')).toBe(true);
    const misspelt = await stack.request('POST', '/v4/geo/resolve-location', { as: users.reader.email, body: { query: 'Amsterdma', limit: 1 } });
    expect(misspelt.body.data[0]).toMatchObject({ name: 'Amsterdam', countryCode: 'NL', match: 'fuzzy' });
  });

  it('finds the places nearest to coordinates, nearest first, within a radius when given', async () => {
    const near = await stack.request('POST', '/v4/geo/reverse', { as: users.a.email, body: { lat: 47.3769, lon: 8.5417, limit: 3 } });
    expect(near.status, JSON.stringify(near.body)).toBe(200);
    expect(near.body.data[0]).toMatchObject({ name: expect.stringMatching(/^Zürich/), countryCode: 'CH' });
    expect(near.body.data[0].distanceMeters).toBeLessThan(1000);
    const distances = near.body.data.map((p: any) => p.distanceMeters);
    expect(distances).toEqual([...distances].sort((x: number, y: number) => x - y));
    expect(near.body.attribution).toMatch(/GeoNames/);
    const ocean = await stack.request('POST', '/v4/geo/reverse', { as: users.a.email, body: { lat: -40, lon: -120, radius: 50_000 } });
    expect(ocean.body.data).toEqual([]);
    const swiss = await stack.request('POST', '/v4/geo/reverse', { as: users.a.email, body: { lat: 47.56, lon: 7.59, limit: 10, country: 'DE' } });
    expect(swiss.body.data.every((p: any) => p.countryCode === 'DE')).toBe(true);
  });

  it('refuses a tenant without the geo capability with 403 naming it, on every geo route', async () => {
    const calls: Array<[string, string, unknown?]> = [
      ['POST', '/v4/geo/resolve-location', { query: 'Paris' }],
      ['POST', '/v4/geo/reverse', { lat: 0, lon: 0 }],
      ['GET', datasets(ids.free)],
      ['POST', datasets(ids.free), { key: 'parks' }],
      ['GET', `${datasets(ids.free)}/parks`],
      ['DELETE', `${datasets(ids.free)}/parks`],
      ['POST', features(ids.free, 'parks'), collection(point('a', 0, 0))],
      ['PUT', features(ids.free, 'parks'), collection()],
      ['GET', features(ids.free, 'parks')],
      ['PATCH', `${datasets(ids.free)}/parks`, { name: 'Parks' }],
      ['POST', `/v4/geo/reports/${ids.free}`, { dataset: 'parks' }],
    ];
    for (const [method, path, body] of calls) {
      const refused = await stack.request(method, path, { as: users.free.email, body });
      expect(refused.status, `${method} ${path}: ${JSON.stringify(refused.body)}`).toBe(403);
      expect(refused.body.error.message).toBe('capability geo is not available to this tenant: the free plan does not include geo');
    }
    const [{ count }] = await sql<[{ count: number }]>`select count(*)::int as count from geo_datasets where tenant_id = ${ids.free}::uuid`;
    expect(count).toBe(0);
  });

  it('creates a dataset, takes a FeatureCollection, and answers its extent and count', async () => {
    const created = await stack.request('POST', datasets(ids.a), { as: users.a.email, body: { key: 'zurich', name: 'Zürich places', description: 'Test data' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ key: 'zurich', name: 'Zürich places', description: 'Test data', featureCount: 0, bbox: null });
    const again = await stack.request('POST', datasets(tenants.a), { as: users.a.email, body: { key: 'zurich' } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');

    const ingested = await stack.request('POST', features(ids.a, 'zurich'), { as: users.a.email, body: ZURICH });
    expect(ingested.status, JSON.stringify(ingested.body)).toBe(200);
    expect(ingested.body).toMatchObject({ created: 5, updated: 0, removed: 0, dataset: { key: 'zurich', featureCount: 5, bbox: [2.3522, 47.3, 8.6, 48.8566] } });
    const got = await stack.request('GET', `${datasets(ids.a)}/zurich`, { as: users.reader.email });
    expect(got.body).toEqual(ingested.body.dataset);
    const listed = await stack.request('GET', datasets(ids.a), { as: users.reader.email });
    expect(listed.body.data.map((d: any) => d.key)).toEqual(['zurich']);
  });

  it('queries by box: features whose geometry meets it, not merely their box', async () => {
    const page = await stack.request('GET', features(ids.a, 'zurich', `bbox=${OLD_TOWN}`), { as: users.reader.email });
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.body.type).toBe('FeatureCollection');
    expect(featureIds(page.body).sort()).toEqual(['hb', 'opera']);
    expect(page.body.features.find((f: any) => f.id === 'hb')).toEqual({ type: 'Feature', id: 'hb', geometry: { type: 'Point', coordinates: [8.5417, 47.3769] }, properties: { name: 'Hauptbahnhof' } });
    expect(page.body.nextCursor).toBeNull();
    const lake = await stack.request('GET', features(ids.a, 'zurich', 'bbox=8.57,47.32,8.58,47.33'), { as: users.a.email });
    expect(featureIds(lake.body)).toEqual(['lake']);
    const all = await stack.request('GET', features(ids.a, 'zurich'), { as: users.a.email });
    expect(featureIds(all.body)).toHaveLength(5);
    expect(featureIds(all.body)).toContain(42);
  });

  it("changes a dataset's name and description by PATCH, keeping its features", async () => {
    const path = `${datasets(ids.a)}/zurich`;
    const before = (await stack.request('GET', path, { as: users.a.email })).body;
    const renamed = await stack.request('PATCH', path, { as: users.a.email, body: { name: 'Zürich, renamed' } });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body).toMatchObject({ key: 'zurich', name: 'Zürich, renamed', description: 'Test data', featureCount: before.featureCount, bbox: before.bbox });
    const cleared = await stack.request('PATCH', path, { as: users.a.email, body: { description: null } });
    expect(cleared.body).toMatchObject({ name: 'Zürich, renamed', description: null });
    for (const [body, field] of [[{}, '(body)'], [{ name: '' }, 'name'], [{ key: 'other' }, 'key'], [{ dataset: 'other' }, 'dataset']] as const) {
      const refused = await stack.request('PATCH', path, { as: users.a.email, body });
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.error.details.field).toBe(field);
    }
    expect((await stack.request('PATCH', `${datasets(ids.a)}/nowhere`, { as: users.a.email, body: { name: 'x' } })).status).toBe(404);
    const restored = await stack.request('PATCH', path, { as: users.a.email, body: { name: before.name, description: before.description } });
    expect({ ...restored.body, updatedAt: before.updatedAt }).toEqual(before);
  });

  it('reports on the features of an area: count, extent, and groups by a property', async () => {
    const report = (body: object) => stack.request('POST', `/v4/geo/reports/${ids.a}`, { as: users.reader.email, body: { dataset: 'zurich', ...body } });
    const whole = await report({ group_by: 'kind' });
    expect(whole.status, JSON.stringify(whole.body)).toBe(200);
    expect(whole.body).toMatchObject({
      dataset: 'zurich',
      area: {},
      featureCount: 5,
      bbox: [2.3522, 47.3, 8.6, 48.8566],
      groups: [{ value: 'null', count: 4 }, { value: '"water"', count: 1 }],
      otherCount: 0,
      generatedAt: expect.any(String),
    });
    const oldTown = await report({ bbox: OLD_TOWN.split(',').map(Number), group_by: 'name' });
    expect(oldTown.body).toMatchObject({ featureCount: 2, groups: [{ value: '"Hauptbahnhof"', count: 1 }, { value: '"Opernhaus"', count: 1 }] });
    const near = await report({ lat: 47.3769, lon: 8.5417, radius: 2000 });
    const listed = await stack.request('GET', features(ids.a, 'zurich', 'lat=47.3769&lon=8.5417&radius=2000'), { as: users.a.email });
    expect(near.body).toMatchObject({ area: { lat: 47.3769, lon: 8.5417, radius: 2000 }, featureCount: listed.body.features.length });
    expect(near.body.featureCount).toBeGreaterThanOrEqual(2);
    expect(near.body.groups).toBeUndefined();
    for (const [body, field] of [[{ lat: 47 }, 'lon'], [{ bbox: [1, 2, 3] }, 'bbox'], [{ group_by: '' }, 'group_by'], [{ groupBy: 'kind' }, 'groupBy']] as const) {
      const refused = await report(body);
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.error.details.field).toBe(field);
    }
    expect((await stack.request('POST', `/v4/geo/reports/${ids.a}`, { as: users.a.email, body: { dataset: 'nowhere' } })).status).toBe(404);
  });

  it('queries by radius: nearest first with the distance, 0 inside a polygon', async () => {
    const near = await stack.request('GET', features(ids.a, 'zurich', 'lat=47.3769&lon=8.5417&radius=2000'), { as: users.a.email });
    expect(near.status, JSON.stringify(near.body)).toBe(200);
    const found = near.body.features.map((f: any) => [f.id, f.distanceMeters]);
    expect(found[0]).toEqual(['hb', 0]);
    expect(found.map(([id]: [string]) => id)).toContain('opera');
    expect(found.map(([id]: [string]) => id)).not.toContain('lake');
    expect(found.map(([id]: [string]) => id)).not.toContain(42);
    const distances = found.map(([, d]: [string, number]) => d);
    expect(distances).toEqual([...distances].sort((x: number, y: number) => x - y));
    expect(distances.every((d: number) => d <= 2000)).toBe(true);
    const opera = found.find(([id]: [string]) => id === 'opera')[1];
    expect(opera).toBeGreaterThan(1200);
    expect(opera).toBeLessThan(1300);
    const inLake = await stack.request('GET', features(ids.a, 'zurich', 'lat=47.32&lon=8.57&radius=10'), { as: users.a.email });
    expect(inLake.body.features.map((f: any) => [f.id, f.distanceMeters])).toEqual([['lake', 0]]);
  });

  it('pages with a cursor, every feature once, and refuses a cursor of another query', async () => {
    for (const query of ['limit=2', 'limit=2&bbox=-180,-90,180,90', 'limit=1&lat=47.37&lon=8.54&radius=1000000']) {
      const seen: unknown[] = [];
      let cursor: string | null = null;
      do {
        const page: any = await stack.request('GET', features(ids.a, 'zurich', `${query}${cursor ? `&cursor=${cursor}` : ''}`), { as: users.a.email });
        expect(page.status, JSON.stringify(page.body)).toBe(200);
        expect(page.body.features.length).toBeLessThanOrEqual(Number(/limit=(\d+)/.exec(query)![1]));
        seen.push(...featureIds(page.body));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen.map(String).sort(), query).toEqual(['42', 'diagonal', 'hb', 'lake', 'opera']);
    }
    const first = await stack.request('GET', features(ids.a, 'zurich', 'limit=1'), { as: users.a.email });
    const misused = await stack.request('GET', features(ids.a, 'zurich', `limit=1&bbox=${OLD_TOWN}&cursor=${first.body.nextCursor}`), { as: users.a.email });
    expect(misused.status).toBe(400);
    expect(misused.body.error.details.field).toBe('cursor');
  });

  it('replaces features of the same id on POST, and removes those a PUT leaves out', async () => {
    await stack.request('POST', datasets(ids.a), { as: users.a.email, body: { key: 'stations' } });
    const first = await stack.request('POST', features(ids.a, 'stations'), { as: users.a.email, body: collection(point('hb', 8.5417, 47.3769), point('oerlikon', 8.5446, 47.4116), point(7, 8.5, 47.3)) });
    expect(first.body).toMatchObject({ created: 3, updated: 0, removed: 0 });
    const moved = await stack.request('POST', features(ids.a, 'stations'), { as: users.a.email, body: collection(point('hb', 8.54, 47.378, { moved: true }), { type: 'Feature', geometry: { type: 'Point', coordinates: [8.6, 47.4] } }) });
    expect(moved.body).toMatchObject({ created: 1, updated: 1, removed: 0, dataset: { featureCount: 4 } });
    const hb = (await stack.request('GET', features(ids.a, 'stations', 'lat=47.378&lon=8.54&radius=1'), { as: users.a.email })).body.features;
    expect(hb).toEqual([{ type: 'Feature', id: 'hb', geometry: { type: 'Point', coordinates: [8.54, 47.378] }, properties: { moved: true }, distanceMeters: 0 }]);
    const generated = (await stack.request('GET', features(ids.a, 'stations', 'bbox=8.59,47.39,8.61,47.41'), { as: users.a.email })).body.features;
    expect(generated[0].id).toMatch(/^[0-9a-f-]{36}$/);
    expect(generated[0].properties).toBeNull();

    const replaced = await stack.request('PUT', features(ids.a, 'stations'), { as: users.a.email, body: collection(point('hb', 8.5417, 47.3769), point(7, 8.5, 47.3)) });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body).toMatchObject({ created: 0, updated: 2, removed: 2, dataset: { featureCount: 2, bbox: [8.5, 47.3, 8.5417, 47.3769] } });
    const emptied = await stack.request('PUT', features(ids.a, 'stations'), { as: users.a.email, body: collection() });
    expect(emptied.body).toMatchObject({ removed: 2, dataset: { featureCount: 0, bbox: null } });
  });

  it('answers boxes and radii across the antimeridian', async () => {
    await stack.request('POST', datasets(ids.a), { as: users.a.email, body: { key: 'pacific' } });
    await stack.request('POST', features(ids.a, 'pacific'), { as: users.a.email, body: collection(point('east', 179.5, 0), point('west', -179.5, 0), point('null-island', 0, 0)) });
    const box = await stack.request('GET', features(ids.a, 'pacific', 'bbox=179,-1,-179,1'), { as: users.a.email });
    expect(featureIds(box.body).sort()).toEqual(['east', 'west']);
    const near = await stack.request('GET', features(ids.a, 'pacific', 'lat=0&lon=179.9&radius=100000'), { as: users.a.email });
    expect(near.body.features.map((f: any) => f.id)).toEqual(['east', 'west']);
    expect(near.body.features[0].distanceMeters).toBeCloseTo(44_478, -2);
  });

  it("keeps each tenant's datasets to itself: another tenant can neither see, query, change nor delete them", async () => {
    const before = (await stack.request('GET', `${datasets(ids.a)}/zurich`, { as: users.a.email })).body;
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', datasets(ids.a)],
      ['POST', datasets(ids.a), { key: 'planted' }],
      ['GET', `${datasets(ids.a)}/zurich`],
      ['DELETE', `${datasets(ids.a)}/zurich`],
      ['POST', features(ids.a, 'zurich'), collection(point('planted', 8.54, 47.37))],
      ['PUT', features(ids.a, 'zurich'), collection()],
      ['GET', features(ids.a, 'zurich', `bbox=${OLD_TOWN}`)],
      ['GET', features(tenants.a, 'zurich', 'lat=47.3769&lon=8.5417&radius=2000')],
      ['PATCH', `${datasets(ids.a)}/zurich`, { name: 'Taken over', description: null }],
      ['POST', `/v4/geo/reports/${ids.a}`, { dataset: 'zurich', group_by: 'name' }],
    ];
    for (const [method, path, body] of attempts) {
      const refused = await stack.request(method, path, { as: users.b.email, body });
      expect(refused.status, `${method} ${path}: ${JSON.stringify(refused.body)}`).toBe(403);
      expect(refused.body.error.code).toBe('FORBIDDEN');
    }
    // Tenant B's dataset of the same key is its own, empty, and B's queries never reach A's features.
    expect((await stack.request('POST', datasets(ids.b), { as: users.b.email, body: { key: 'zurich' } })).status).toBe(201);
    const own = await stack.request('GET', features(ids.b, 'zurich', 'lat=47.3769&lon=8.5417&radius=1000000'), { as: users.b.email });
    expect(own.body.features).toEqual([]);
    expect((await stack.request('GET', `${datasets(ids.b)}/stations`, { as: users.b.email })).status).toBe(404);
    expect((await stack.request('DELETE', `${datasets(ids.b)}/stations`, { as: users.b.email })).status).toBe(404);
    expect((await stack.request('GET', `${datasets(ids.a)}/zurich`, { as: users.a.email })).body).toEqual(before);
  });

  it('isolates the rows in PostgreSQL itself', async () => {
    const asTenant = <T>(tenantId: string, fn: (tx: postgres.TransactionSql) => Promise<T>) =>
      sql.begin(async (tx) => {
        await tx`select set_config('svc.tenant_id', ${tenantId}, true), set_config('role', 'svc_app', true)`;
        return fn(tx);
      });
    const seen = await asTenant(ids.b, (tx) => tx`select fid from geo_features where fid in ('hb', 'opera', 'lake')`);
    expect(seen).toHaveLength(0);
    const [aDataset] = await sql<{ id: string }[]>`select id::text as id from geo_datasets where tenant_id = ${ids.a}::uuid and key = 'zurich'`;
    await expect(
      asTenant(ids.b, (tx) => tx`insert into geo_features (tenant_id, dataset_id, fid, geometry_type, geometry, min_lon, min_lat, max_lon, max_lat) values (${ids.a}::uuid, ${aDataset!.id}::uuid, 'x', 'Point', '{}', 0, 0, 0, 0)`),
    ).rejects.toThrow(/row-level security/);
    expect(await asTenant(ids.b, (tx) => tx`delete from geo_features where dataset_id = ${aDataset!.id}::uuid returning 1`)).toHaveLength(0);
  });

  it('needs the resources permissions of the tenant for datasets', async () => {
    const refused = await stack.request('POST', datasets(ids.a), { as: users.reader.email, body: { key: 'readers' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe('missing permission resources.create');
    expect((await stack.request('POST', features(ids.a, 'zurich'), { as: users.reader.email, body: collection() })).status).toBe(403);
    expect((await stack.request('DELETE', `${datasets(ids.a)}/zurich`, { as: users.reader.email })).status).toBe(403);
    expect((await stack.request('PATCH', `${datasets(ids.a)}/zurich`, { as: users.reader.email, body: { name: 'Readers' } })).status).toBe(403);
    expect((await stack.request('POST', `/v4/geo/reports/${ids.a}`, { as: users.reader.email, body: { dataset: 'zurich' } })).status).toBe(200);
  });

  it('applies the limits an override of the geo capability sets, storing nothing past them', async () => {
    const set = await stack.request('PUT', `/v4/platform/capabilities/overrides/${ids.free}/geo`, {
      as: PLATFORM_ADMIN,
      body: { allowed: true, limits: { maxDatasets: 1, maxFeaturesPerDataset: 2 }, reason: 'pilot' },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect((await stack.request('POST', datasets(ids.free), { as: users.free.email, body: { key: 'one' } })).status).toBe(201);
    const second = await stack.request('POST', datasets(ids.free), { as: users.free.email, body: { key: 'two' } });
    expect(second.status).toBe(403);
    expect(second.body.error.message).toBe('capability geo allows 1 datasets per tenant, and this tenant holds 1');
    const over = await stack.request('POST', features(ids.free, 'one'), { as: users.free.email, body: collection(point(1, 0, 0), point(2, 1, 1), point(3, 2, 2)) });
    expect(over.status).toBe(403);
    expect(over.body.error.message).toBe('capability geo allows 2 features per dataset; dataset "one" would hold 3');
    expect((await stack.request('GET', `${datasets(ids.free)}/one`, { as: users.free.email })).body.featureCount).toBe(0);
    await stack.request('DELETE', `/v4/platform/capabilities/overrides/${ids.free}/geo`, { as: PLATFORM_ADMIN });
  });

  const polygon = (ring: number[][]) => ({ type: 'Feature', geometry: { type: 'Polygon', coordinates: [ring] }, properties: {} });
  it.each<[string, string, string, unknown, string]>([
    ['a latitude past 90', 'POST', '/v4/geo/reverse', { lat: 90.5, lon: 0 }, 'lat'],
    ['a longitude past 180', 'POST', '/v4/geo/reverse', { lat: 0, lon: -180.01 }, 'lon'],
    ['a reverse radius of 0', 'POST', '/v4/geo/reverse', { lat: 0, lon: 0, radius: 0 }, 'radius'],
    ['coordinates as text', 'POST', '/v4/geo/reverse', { lat: '47.3', lon: 8.5 }, 'lat'],
    ['an empty query', 'POST', '/v4/geo/resolve-location', { query: '  ' }, 'query'],
    ['a query of punctuation', 'POST', '/v4/geo/resolve-location', { query: '!!!' }, 'query'],
    ['a three-letter country', 'POST', '/v4/geo/resolve-location', { query: 'Paris', country: 'FRA' }, 'country'],
    ['a limit past 100', 'POST', '/v4/geo/resolve-location', { query: 'Paris', limit: 101 }, 'limit'],
    ['an unknown option', 'POST', '/v4/geo/resolve-location', { query: 'Paris', fuzzy: false }, 'fuzzy'],
    ['a dataset key that is not kebab-case', 'POST', 'DATASETS', { key: 'City_Parks' }, 'key'],
    ['a box with south above north', 'GET', 'FEATURES?bbox=8.5,47.4,8.6,47.3', undefined, 'bbox'],
    ['a box of three numbers', 'GET', 'FEATURES?bbox=8.5,47.4,8.6', undefined, 'bbox'],
    ['a box past the poles', 'GET', 'FEATURES?bbox=8.5,-91,8.6,47', undefined, 'bbox.1'],
    ['a radius without its center', 'GET', 'FEATURES?radius=100', undefined, 'lat'],
    ['a radius of 0', 'GET', 'FEATURES?lat=47&lon=8&radius=0', undefined, 'radius'],
    ['a radius past 1000 km', 'GET', 'FEATURES?lat=47&lon=8&radius=1000001', undefined, 'radius'],
    ['a box and a radius together', 'GET', `FEATURES?bbox=${OLD_TOWN}&lat=47&lon=8&radius=10`, undefined, 'bbox'],
    ['an unknown query parameter', 'GET', 'FEATURES?near=47,8', undefined, 'near'],
    ['a latitude that is no number', 'GET', 'FEATURES?lat=north&lon=8&radius=10', undefined, 'lat'],
    ['something other than a FeatureCollection', 'POST', 'FEATURES', { type: 'Feature', geometry: { type: 'Point', coordinates: [0, 0] } }, 'type'],
    ['a position past the poles', 'POST', 'FEATURES', collection(point('x', 8.5, 47), point('y', 8.5, 91)), 'features.1.geometry.coordinates.1'],
    ['a position of one number', 'POST', 'FEATURES', collection({ type: 'Feature', geometry: { type: 'Point', coordinates: [8.5] }, properties: {} }), 'features.0.geometry.coordinates'],
    ['a ring that is not closed', 'POST', 'FEATURES', collection(polygon([[0, 0], [1, 0], [1, 1], [0, 1]])), 'features.0.geometry.coordinates.0'],
    ['an unknown geometry type', 'POST', 'FEATURES', collection({ type: 'Feature', geometry: { type: 'Circle', coordinates: [0, 0] }, properties: {} }), 'features.0.geometry.type'],
    ['a feature without a geometry', 'POST', 'FEATURES', collection({ type: 'Feature', geometry: null, properties: {} }), 'features.0.geometry'],
    ['two features of one id', 'POST', 'FEATURES', collection(point('same', 0, 0), point('same', 1, 1)), 'features.1.id'],
    ['properties that are no object', 'PUT', 'FEATURES', collection({ ...point('x', 0, 0), properties: [1, 2] }), 'features.0.properties'],
    ['coordinates of another reference system', 'POST', 'FEATURES', { ...collection(point('x', 8.5, 47.4)), crs: { type: 'name', properties: { name: 'EPSG:2056' } } }, 'crs'],
    ['more than 10000 features', 'POST', 'FEATURES', collection(...Array.from({ length: 10_001 }, () => ({ type: 'Feature', geometry: { type: 'Point', coordinates: [0, 0] } }))), 'features'],
  ])('refuses %s with 400 naming the field, changing nothing', async (_label, method, path, body, field) => {
    const before = (await stack.request('GET', `${datasets(ids.a)}/zurich`, { as: users.a.email })).body;
    const target = path.replace('DATASETS', datasets(ids.a)).replace('FEATURES', features(ids.a, 'zurich'));
    const refused = await stack.request(method, target, { as: users.a.email, body });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field } });
    expect((await stack.request('GET', `${datasets(ids.a)}/zurich`, { as: users.a.email })).body).toEqual(before);
    expect((await stack.request('GET', datasets(ids.a), { as: users.a.email })).body.data.map((d: any) => d.key)).toEqual(['pacific', 'stations', 'zurich']);
  });

  it('refuses a FeatureCollection over the 1 MiB body limit with 413', async () => {
    const big = collection(...Array.from({ length: 9000 }, (_, i) => point(`p${i}`, 0, 0, { note: 'x'.repeat(100) })));
    const refused = await stack.request('POST', features(ids.a, 'zurich'), { as: users.a.email, body: big });
    expect(refused.status).toBe(413);
    expect(refused.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('deletes a dataset with its features; then it is gone', async () => {
    expect((await stack.request('DELETE', `${datasets(ids.a)}/pacific`, { as: users.a.email })).status).toBe(204);
    expect((await stack.request('GET', `${datasets(ids.a)}/pacific`, { as: users.a.email })).status).toBe(404);
    expect((await stack.request('GET', features(ids.a, 'pacific'), { as: users.a.email })).status).toBe(404);
    expect((await stack.request('DELETE', `${datasets(ids.a)}/pacific`, { as: users.a.email })).status).toBe(404);
    const [{ count }] = await sql<[{ count: number }]>`select count(*)::int as count from geo_features f where f.tenant_id = ${ids.a}::uuid and f.fid in ('east', 'west', 'null-island')`;
    expect(count).toBe(0);
  });
});
