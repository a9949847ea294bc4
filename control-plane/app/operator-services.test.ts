import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AppsService } from '../apps/apps.service.ts';
import { createLocalDirectoryBlobStore } from '../blobs/local-directory.ts';
import { createDb } from '../db/client.ts';
import { OPERATOR_FUNCTIONS, type OperatorServices } from '../operator/operator.ts';
import { createServices, operatorServicesOf } from './services.ts';

/**
 * The operator reaches the platform through the domains' declared interfaces; what the composition
 * root gives it holds, of each, the functions the operator declares it calls and nothing else.
 */
describe('the operator services', () => {
  const blobRoot = mkdtempSync(join(tmpdir(), 'operator-services-'));
  // Nothing listens there: building the services connects to nothing.
  const db = createDb('postgres://svc@127.0.0.1:1/svc', { max: 1, systemMax: 1, readConnections: 1 });
  const services = createServices({ db, blobs: createLocalDirectoryBlobStore(blobRoot), searchVectors: { embedder: null, vectors: null } });
  const operator = operatorServicesOf(services);
  afterAll(async () => {
    await services.close();
    await db.close();
    rmSync(blobRoot, { recursive: true, force: true });
  });

  it('hold the functions the operator declares, exactly, in frozen views', () => {
    expect(Object.keys(operator).sort()).toEqual(Object.keys(OPERATOR_FUNCTIONS).sort());
    for (const [member, names] of Object.entries(OPERATOR_FUNCTIONS)) {
      const view = operator[member as keyof OperatorServices] as unknown as Record<string, unknown>;
      expect({ member, functions: Object.keys(view).sort() }).toEqual({ member, functions: [...names].sort() });
      for (const name of names) expect({ member, name, type: typeof view[name] }).toEqual({ member, name, type: 'function' });
      expect(Object.isFrozen(view)).toBe(true);
    }
  });

  it("are built from the declared interfaces, not the API's services, which a cast does not bring back", () => {
    expect(operator.apps).not.toBe(services.appsDeclared);
    expect(operator.storage).not.toBe(services.storageDeclared);
    expect(operator.tenants).not.toBe(services.tenantsDeclared);
    // The apps service of the API holds no declarations; the operator's view holds nothing of the API.
    expect('declare' in services.apps).toBe(false);
    expect((operator.apps as unknown as AppsService).create).toBeUndefined();
    expect('provision' in operator.storage).toBe(false);
    expect('indexBuilds' in operator.storage).toBe(false);
    expect(() => Object.assign(operator.apps, { create: services.apps.create })).toThrow(TypeError);
  });

  it('call through to the services they were built from', async () => {
    // The database does not answer: the call reaches the storage rows and fails there.
    await expect(operator.storage.readiness('00000000-0000-4000-8000-000000000000')).rejects.toThrow();
    // Without a workflow engine, starting provisioning is refused as the storage service refuses it.
    await expect(operator.storage.startProvisioning('00000000-0000-4000-8000-000000000000', ['blob'])).rejects.toThrow('workflow engine is not configured');
  });
});
