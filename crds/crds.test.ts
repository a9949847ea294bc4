import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runKubectl } from '../scripts/stack/kubernetes.ts';

const CRDS_DIR = fileURLToPath(new URL('.', import.meta.url));
const GROUP_VERSION = 'platform.svc.dev/v1alpha1';
const run = (args: string[], input?: unknown) =>
  runKubectl(inject('kubectlPath'), inject('kubeconfigPath'), args, { input: input === undefined ? undefined : JSON.stringify(input) });
/** Names unique to this run: the API server outlives it. */
const id = randomBytes(3).toString('hex');
const created: string[] = [];

type Json = Record<string, unknown>;

function tenant(name: string, spec: Json): Json {
  return { apiVersion: GROUP_VERSION, kind: 'Tenant', metadata: { name: `${name}-${id}` }, spec };
}

function app(name: string, spec: Json): Json {
  return { apiVersion: GROUP_VERSION, kind: 'App', metadata: { name: `${name}-${id}` }, spec };
}

async function create(object: Json): Promise<Json> {
  const result = JSON.parse(await run(['create', '-o', 'json', '-f', '-'], object)) as Json;
  created.push(`${(object.kind as string).toLowerCase()}/${(object.metadata as Json).name as string}`);
  return result;
}

/** The API server's own refusal of `object` (a server-side dry run, so nothing is stored either way). */
async function rejection(object: Json): Promise<string> {
  try {
    await run(['create', '--dry-run=server', '--validate=strict', '-f', '-'], object);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`the API server accepted ${JSON.stringify(object)}`);
}

async function updateRejection(kindName: string, patch: Json): Promise<string> {
  try {
    await run(['patch', kindName, '--type=merge', '--dry-run=server', '-p', JSON.stringify(patch)]);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`the API server accepted the patch ${JSON.stringify(patch)} of ${kindName}`);
}

beforeAll(async () => {
  await run(['apply', '--server-side', '--force-conflicts', '--field-manager=svc-crds-test', '-f', CRDS_DIR]);
  await run(['wait', '--for=condition=Established', '--timeout=60s', 'crd/tenants.platform.svc.dev', 'crd/apps.platform.svc.dev']);
});

afterAll(async () => {
  if (created.length > 0) await run(['delete', '--ignore-not-found', '--wait=false', ...created]);
});

describe('CRDs on a real API server', () => {
  it('are structural, cluster-scoped, with a status subresource and printer columns', async () => {
    for (const name of ['tenants.platform.svc.dev', 'apps.platform.svc.dev']) {
      const crd = JSON.parse(await run(['get', `crd/${name}`, '-o', 'json'])) as {
        spec: { scope: string; versions: Array<{ subresources?: { status?: object }; additionalPrinterColumns?: unknown[] }> };
        status: { conditions: Array<{ type: string; status: string }> };
      };
      expect(crd.spec.scope).toBe('Cluster');
      expect(crd.spec.versions[0]!.subresources?.status).toEqual({});
      expect(crd.spec.versions[0]!.additionalPrinterColumns?.length).toBeGreaterThan(3);
      const conditions = Object.fromEntries(crd.status.conditions.map((c) => [c.type, c.status]));
      expect(conditions).toMatchObject({ Established: 'True', NamesAccepted: 'True' });
      expect(conditions.NonStructuralSchema).toBeUndefined();
    }
  });

  it('stores a valid root tenant with the v4 defaults, and shows it with its columns', async () => {
    const stored = await create(tenant('acme', { name: 'Acme', slug: `acme-${id}`, homeRegion: 'eu', domains: ['acme.example'] }));
    expect(stored.spec).toEqual({
      name: 'Acme',
      slug: `acme-${id}`,
      homeRegion: 'eu',
      domains: ['acme.example'],
      usecase: 'generic',
      starterTemplate: 'blank-vertical-template',
      storageBackends: ['all'],
    });
    expect((stored.metadata as Json).generation).toBe(1);
    const table = await run(['get', 'tenant', `acme-${id}`]);
    expect(table.split('\n')[0]).toMatch(/^NAME\s+SLUG\s+PARENT\s+REGION\s+PHASE\s+READY\s+REASON\s+AGE$/);
    expect(await run(['get', 'tenants', '-o', 'wide'])).toMatch(/TENANT ID\s+NAMESPACE/);
  });

  it('stores a child tenant without a home region, and every field the contract names', async () => {
    const stored = await create(
      tenant('child', {
        name: 'Acme Retail',
        slug: `acme-retail-${id}`,
        parent: `acme-${id}`,
        usecase: 'retail',
        industry: 'Groceries',
        starterTemplate: 'retail-starter',
        storageBackends: ['postgresql', 'mongodb', 'blob', 'search'],
      }),
    );
    expect(stored.spec).toMatchObject({ parent: `acme-${id}`, usecase: 'retail', storageBackends: ['postgresql', 'mongodb', 'blob', 'search'] });
    expect((stored.spec as Json).homeRegion).toBeUndefined();
  });

  it('rejects invalid tenants with the API server\'s own errors', async () => {
    const root = { name: 'Acme', slug: `bad-${id}`, homeRegion: 'eu' };
    const cases: Array<[Json, RegExp]> = [
      [{ ...root, slug: 'Acme_Co' }, /spec\.slug: Invalid value: "Acme_Co": spec\.slug in body should match '\^\[a-z0-9\]\+\(-\[a-z0-9\]\+\)\*\$'/],
      [{ ...root, slug: 'acme--co' }, /spec\.slug: Invalid value: "acme--co"/],
      [{ ...root, slug: '0b7e2c4a-1f3d-4e5a-9b8c-7d6e5f4a3b2c' }, /spec\.slug: Invalid value: "0b7e2c4a-1f3d-4e5a-9b8c-7d6e5f4a3b2c": slug must not have the form of a tenant id \(a UUID\)/],
      [{ ...root, slug: `a${'b'.repeat(63)}` }, /spec\.slug: Too long: may not be more than 63 (bytes|characters)/],
      [{ ...root, usecase: 'banking' }, /spec\.usecase: Unsupported value: "banking": supported values: "council", "retail", "healthcare", "finance", "manufacturing", "generic"/],
      [{ name: 'Acme', slug: `bad-${id}` }, /spec\.homeRegion: Required value: homeRegion is required for a root tenant \(one without parent\)/],
      [{ ...root, homeRegion: 'us' }, /spec\.homeRegion: Unsupported value: "us": supported values: "au", "ca", "eu"/],
      [{ ...root, name: '   ' }, /spec\.name: Invalid value: " {3}": spec\.name in body should match '\\S'/],
      [{ ...root, name: undefined }, /spec\.name: Required value/],
      // Blank in Unicode's sense, as v4 trims: a no-break space, an ideographic space.
      [{ ...root, name: '\u00a0' }, /spec\.name: Invalid value: .*must not be blank/],
      [{ ...root, industry: ' \u3000 ' }, /spec\.industry: Invalid value: .*must not be blank/],
      [{ ...root, domains: ['Not A Domain'] }, /spec\.domains\[0\]: Invalid value: "Not A Domain"/],
      [{ ...root, domains: ['a.example', 'a.example'] }, /spec\.domains\[1\]: Duplicate value: "a\.example"/],
      [{ ...root, storageBackends: ['all', 'blob'] }, /spec\.storageBackends: Invalid value: 'all' cannot be combined with other backends/],
      [{ ...root, storageBackends: ['cassandra'] }, /spec\.storageBackends\[0\]: Unsupported value: "cassandra"/],
      [{ ...root, starterTemplate: 'Blank Template' }, /spec\.starterTemplate: Invalid value: "Blank Template"/],
      [{ ...root, region: 'eu' }, /unknown field "spec\.region"/],
    ];
    for (const [spec, message] of cases) {
      expect(await rejection(tenant('bad', spec)), JSON.stringify(spec)).toMatch(message);
    }
    expect(await rejection({ apiVersion: GROUP_VERSION, kind: 'Tenant', metadata: { name: `bad-${id}` } })).toMatch(/spec: Required value/);
  });

  it('keeps slug, parent, home region and starter template immutable, and other fields editable', async () => {
    const name = `tenant/acme-${id}`;
    expect(await updateRejection(name, { spec: { slug: `other-${id}` } })).toMatch(/spec\.slug: Invalid value: "other-\w+": slug is immutable/);
    expect(await updateRejection(name, { spec: { parent: 'someone' } })).toMatch(/spec\.parent: Invalid value: .*parent is immutable/);
    expect(await updateRejection(name, { spec: { homeRegion: 'au' } })).toMatch(/homeRegion is immutable/);
    expect(await updateRejection(name, { spec: { homeRegion: null } })).toMatch(/homeRegion is required for a root tenant/);
    expect(await updateRejection(name, { spec: { starterTemplate: 'other' } })).toMatch(/starterTemplate is immutable/);

    const updated = JSON.parse(await run(['patch', name, '--type=merge', '-o', 'json', '-p', JSON.stringify({ spec: { name: 'Acme Corp', domains: ['acme.example', 'acme.test'] } })])) as Json;
    expect(updated.spec).toMatchObject({ name: 'Acme Corp', domains: ['acme.example', 'acme.test'] });
    expect((updated.metadata as Json).generation).toBe(2);
  });

  it('takes status only through the status subresource, in the metav1.Condition shape', async () => {
    const name = `tenant/acme-${id}`;
    const generation = Number(await run(['get', name, '-o', 'jsonpath={.metadata.generation}']));
    const condition = { type: 'Ready', status: 'True', reason: 'Provisioned', message: 'tenant is active', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: generation };
    const status = { observedGeneration: generation, phase: 'Ready', tenantId: 'b1f1c7e0-0000-4000-8000-000000000001', homeRegion: 'eu', conditions: [condition] };
    // An operator may be reconciling this object meanwhile: only what this test writes is checked.
    const marker = `main-resource-${id}`;
    await run(['patch', name, '--type=merge', '-p', JSON.stringify({ status: { tenantId: marker } })]);
    const afterMain = JSON.parse(await run(['get', name, '-o', 'json'])) as { status?: Json };
    expect(afterMain.status?.tenantId).not.toBe(marker);

    const patched = JSON.parse(await run(['patch', name, '--subresource=status', '--type=merge', '-o', 'json', '-p', JSON.stringify({ status })])) as Json;
    expect(patched.status).toMatchObject(status);
    expect((patched.metadata as Json).generation).toBe(generation);

    const badCondition = { ...condition, status: 'Yes', reason: 'not a reason!' };
    const refusal = await run(['patch', name, '--subresource=status', '--type=merge', '--dry-run=server', '-p', JSON.stringify({ status: { conditions: [badCondition] } })]).then(
      () => '',
      (error: Error) => error.message,
    );
    expect(refusal).toMatch(/status\.conditions\[0\]\.status: Unsupported value: "Yes"/);
    expect(refusal).toMatch(/status\.conditions\[0\]\.reason: Invalid value: "not a reason!"/);
  });

  it('stores a valid app with its defaults', async () => {
    const stored = await create(app('portal', { name: 'Citizen Portal', companyTenant: `acme-${id}`, template: 'council-portal', appUrl: 'https://portal.acme.example' }));
    expect(stored.spec).toEqual({
      name: 'Citizen Portal',
      companyTenant: `acme-${id}`,
      template: 'council-portal',
      appUrl: 'https://portal.acme.example',
      source: 'svc-cli',
      lifecycleStatus: 'pending',
    });
    const withChild = await create(
      app('shop', { name: 'Shop', key: 'shop', companyTenant: `acme-${id}`, childTenant: { name: 'Shop Tenant', slug: `shop-${id}` }, lifecycleStatus: 'active' }),
    );
    expect(withChild.spec).toMatchObject({ key: 'shop', childTenant: { name: 'Shop Tenant', slug: `shop-${id}` }, lifecycleStatus: 'active' });
    // As in v4, the child tenant's slug may be left to the operator (the kebab-case of its name).
    const derived = await create(app('kiosk', { name: 'Kiosk', companyTenant: `acme-${id}`, childTenant: { name: 'Kiosk Tenant' } }));
    expect((derived.spec as Json).childTenant).toEqual({ name: 'Kiosk Tenant' });
    expect((await run(['get', 'app', `shop-${id}`])).split('\n')[0]).toMatch(/^NAME\s+KEY\s+COMPANY\s+LIFECYCLE\s+PHASE\s+READY\s+REASON\s+AGE$/);
  });

  it('rejects invalid apps with the API server\'s own errors', async () => {
    const valid = { name: 'Portal', companyTenant: `acme-${id}` };
    const cases: Array<[Json, RegExp]> = [
      [{ name: 'Portal' }, /spec\.companyTenant: Required value/],
      [{ companyTenant: `acme-${id}` }, /spec\.name: Required value/],
      [{ ...valid, companyTenant: 'Acme Co' }, /spec\.companyTenant: Invalid value: "Acme Co"/],
      [{ ...valid, key: 'Citizen Portal' }, /spec\.key: Invalid value: "Citizen Portal": spec\.key in body should match/],
      [{ ...valid, lifecycleStatus: 'live' }, /spec\.lifecycleStatus: Unsupported value: "live": supported values: "pending", "active", "suspended", "retired"/],
      [{ ...valid, appUrl: 'not a url' }, /spec\.appUrl: Invalid value: "not a url": appUrl must be an absolute http or https URL/],
      [{ ...valid, appUrl: 'ftp://files.acme.example' }, /appUrl must be an absolute http or https URL/],
      // The URLs v4 refuses too: not written out in full, or a port beyond 65535.
      ...['http:files.acme.example', ' https://files.acme.example', 'https://files.acme.example\\path', 'https:///files.acme.example', 'https://files.acme.example:99999'].map(
        (appUrl): [Json, RegExp] => [{ ...valid, appUrl }, /appUrl must be an absolute http or https URL/],
      ),
      [{ ...valid, name: '!!!' }, /spec\.key: Invalid value: .*a name without letters or digits needs spec\.key/],
      [{ ...valid, childTenant: { name: '???' } }, /spec\.childTenant\.slug: Invalid value: .*a child tenant name without letters or digits needs a slug/],
      [{ ...valid, childTenant: { slug: 'shop' } }, /spec\.childTenant\.name: Required value/],
      [{ ...valid, key: 'portal', name: '\u00a0\u2003' }, /spec\.name: Invalid value: .*must not be blank/],
      [{ ...valid, childTenant: { name: '\u00a0', slug: 'shop' } }, /spec\.childTenant\.name: Invalid value: .*must not be blank/],
      [{ ...valid, parentTenant: `acme-${id}` }, /spec\.parentTenant: Invalid value: .*parentTenant needs childTenant/],
      [{ ...valid, childTenant: { name: 'Shop', slug: 'Shop!' } }, /spec\.childTenant\.slug: Invalid value: "Shop!"/],
      [{ ...valid, childTenant: { name: 'Shop', slug: '0b7e2c4a-1f3d-4e5a-9b8c-7d6e5f4a3b2c' } }, /spec\.childTenant\.slug: .*slug must not have the form of a tenant id \(a UUID\)/],
      [{ ...valid, template: 'Council Portal' }, /spec\.template: Invalid value: "Council Portal"/],
    ];
    for (const [spec, message] of cases) {
      expect(await rejection(app('bad', spec)), JSON.stringify(spec)).toMatch(message);
    }
    // Edges that both the CRD and v4 accept: a port, a query and fragment, an upper-case scheme; a name whose letters are not ASCII.
    const edges = await create(app('edges', { ...valid, name: 'Été', appUrl: 'HTTPS://portal.acme.example:8443/app?x=1#top', childTenant: { name: 'Ωmega' } }));
    expect(edges.spec).toMatchObject({ name: 'Été', appUrl: 'HTTPS://portal.acme.example:8443/app?x=1#top', childTenant: { name: 'Ωmega' } });
  });

  it('keeps an app\'s key (once set), company tenant and child tenant immutable', async () => {
    const shop = `app/shop-${id}`;
    expect(await updateRejection(shop, { spec: { key: 'store' } })).toMatch(/spec\.key: Invalid value: .*key cannot be changed or removed once set/);
    expect(await updateRejection(shop, { spec: { key: null } })).toMatch(/key cannot be changed or removed once set/);
    expect(await updateRejection(shop, { spec: { companyTenant: 'globex' } })).toMatch(/companyTenant is immutable/);
    expect(await updateRejection(shop, { spec: { childTenant: { slug: 'other' } } })).toMatch(/childTenant is immutable/);
    expect(await updateRejection(shop, { spec: { childTenant: null } })).toMatch(/childTenant cannot be added or removed after creation/);
    expect(await updateRejection(shop, { spec: { parentTenant: `acme-${id}` } })).toMatch(/parentTenant is immutable/);
    // The child tenant starts from the app's template, once: an app with a child tenant keeps it.
    expect(await updateRejection(shop, { spec: { template: 'other-template' } })).toMatch(/spec\.template: Invalid value: .*template cannot change on an app with a child tenant/);
    const portal = `app/portal-${id}`;
    const keyed = JSON.parse(await run(['patch', portal, '--type=merge', '-o', 'json', '-p', JSON.stringify({ spec: { key: 'citizen-portal', lifecycleStatus: 'active', template: 'council-portal' } })])) as Json;
    expect(keyed.spec).toMatchObject({ key: 'citizen-portal', lifecycleStatus: 'active', template: 'council-portal' });
  });
});
