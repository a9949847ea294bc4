import { randomBytes } from 'node:crypto';
import { tenantBlobPrefix } from '../../blobs/blob-store.ts';
import type { DoctorCheck } from '../storage.schema.ts';
import { fail, ok, warn, type BackendDeps, type BackendDriver } from './backend.ts';

/** The object that marks a tenant's area as provisioned (object stores have no directories to create). */
export const AREA_MARKER = '.svc-area.json';

const PROVISION_HINT = 'provision the backend: POST .../storage/provision with {"backend": "blob"}';

/** The tenant's area of the blob store: every key under `tenants/<tenantId>/`. */
export function createBlobBackend(deps: BackendDeps): BackendDriver {
  const marker = (tenantId: string) => `${tenantBlobPrefix(tenantId)}${AREA_MARKER}`;

  return {
    backend: 'blob',

    async location(tenantId) {
      return { store: deps.blobs.info().kind, prefix: tenantBlobPrefix(tenantId), isolation: 'key-prefix' };
    },

    async reconcile(tenantId, { apply }) {
      if (await deps.blobs.head(marker(tenantId))) return [];
      if (apply) await deps.blobs.put(marker(tenantId), JSON.stringify({ tenantId, createdAt: new Date().toISOString() }));
      return [{ backend: 'blob', action: 'create', object: 'area', name: tenantBlobPrefix(tenantId), description: `create the tenant's area ${tenantBlobPrefix(tenantId)}` }];
    },

    async checks(tenantId) {
      const { kind, location } = deps.blobs.info();
      const where = `${kind} ${location}, prefix ${tenantBlobPrefix(tenantId)}`;
      const checks: DoctorCheck[] = [];
      try {
        checks.push(
          (await deps.blobs.head(marker(tenantId)))
            ? ok('blob', 'area', `the tenant's area exists (${where})`)
            : warn('blob', 'area', `the tenant's area is not provisioned (${where})`, PROVISION_HINT),
        );
      } catch (error) {
        checks.push(fail('blob', 'area', `the blob store did not answer (${where}): ${(error as Error).message}`, 'check that the blob store is reachable (SVC_BLOB_DIR for a local directory)'));
        return checks;
      }
      const probe = `${tenantBlobPrefix(tenantId)}.doctor-probe-${randomBytes(6).toString('hex')}`;
      const content = randomBytes(16);
      try {
        await deps.blobs.put(probe, content);
        const read = await deps.blobs.get(probe);
        if (!read || Buffer.compare(Buffer.from(read), content) !== 0) throw new Error('the probe object read back differs from what was written');
        checks.push(ok('blob', 'writable', `wrote, read back and removed a probe object (${where})`));
      } catch (error) {
        checks.push(fail('blob', 'writable', `the tenant's area is not writable (${where}): ${(error as Error).message}`, `give the platform's user write access to ${location}, or point SVC_BLOB_DIR elsewhere`));
      } finally {
        await deps.blobs.delete(probe).catch(() => false);
      }
      return checks;
    },
  };
}
