import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalDirectoryBlobStore } from '../blobs/local-directory.ts';
import { createDb } from '../db/client.ts';
import type { ResourcesService } from '../resources/resources.service.ts';
import type { StorageService } from '../storage/storage.service.ts';
import type { ApiServices } from '../trpc/context.ts';
import { createInProcessControlPlane } from './in-process.ts';
import { API_FUNCTIONS, apiServicesOf, createServices, type NarrowApiServices } from './services.ts';

/**
 * The API's procedures reach the services through their context; what the composition root puts
 * there holds, of each service, the functions its router declares and nothing else.
 */
describe('the API services', () => {
  const blobRoot = mkdtempSync(join(tmpdir(), 'api-services-'));
  // Nothing listens there: building the services connects to nothing, and the health check says so.
  const db = createDb('postgres://svc@127.0.0.1:1/svc', { max: 1, systemMax: 1, readConnections: 1 });
  const services = createServices({ db, blobs: createLocalDirectoryBlobStore(blobRoot), searchVectors: { embedder: null, vectors: null } });
  const api = apiServicesOf(services);
  afterAll(async () => {
    await services.close();
    await db.close();
    rmSync(blobRoot, { recursive: true, force: true });
  });

  it("hold each router's declared functions, exactly", () => {
    expect(Object.keys(api).sort()).toEqual(Object.keys(API_FUNCTIONS).sort());
    for (const [member, names] of Object.entries(API_FUNCTIONS)) {
      const view = api[member as keyof ApiServices] as unknown as Record<string, unknown>;
      expect({ member, functions: Object.keys(view).sort() }).toEqual({ member, functions: [...names].sort() });
      for (const name of names) expect({ member, name, type: typeof view[name] }).toEqual({ member, name, type: 'function' });
      expect(Object.isFrozen(view)).toBe(true);
    }
  });

  it('leave out what no router declares, which a cast does not bring back', () => {
    expect(typeof services.resources.reproject).toBe('function');
    expect((api.resources as unknown as ResourcesService).reproject).toBeUndefined();
    expect('reproject' in api.resources).toBe(false);
    expect(typeof services.storage.indexBuilds.resume).toBe('function');
    expect((api.storage as unknown as StorageService).indexBuilds).toBeUndefined();
    // The callers are the identity service's two resolvers, not the rest of that service.
    expect(typeof services.identity.me).toBe('function');
    expect(Object.keys(api.callers).sort()).toEqual(['resolveActor', 'resolveUser']);
    expect(() => Object.assign(api.resources, { reproject: services.resources.reproject })).toThrow(TypeError);
    const all = Object.values(services).reduce<number>((n, member) => n + (member && typeof member === 'object' ? Object.keys(member).length : 0), 0);
    const given = Object.values(api).reduce((n, view) => n + Object.keys(view).length, 0);
    expect(given).toBeLessThan(all);
  });

  it('are what the in-process caller runs procedures with, and the whole services are refused there', async () => {
    const controlPlane = createInProcessControlPlane(api);
    expect(await controlPlane.query({ identity: null }, 'health', 'check', undefined)).toEqual({ status: 'unavailable', checks: { database: 'unreachable' } });
    // @ts-expect-error: the whole services would hand each router more than it declares.
    const whole: NarrowApiServices = services;
    expect(whole).toBe(services);
  });

  it("are declared once per router: its ApiServices member is the Pick of the list it exports", () => {
    const handWritten: string[] = [];
    const root = fileURLToPath(new URL('../', import.meta.url));
    for (const file of readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.router.ts'))) {
      const declaration = /interface ApiServices \{([^}]*)\}/.exec(readFileSync(join(root, file), 'utf8'))?.[1];
      for (const line of declaration?.split('\n').filter((l) => l.includes(':')) ?? []) {
        if (!/^\s*\w+: Pick<\w+, \(typeof [A-Z_]+_API\)\[number\]>;$/.test(line)) handWritten.push(`${file}: ${line.trim()}`);
      }
    }
    expect(handWritten).toEqual([]);
  });
});
