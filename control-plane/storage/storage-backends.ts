import type { BlobStore } from '../blobs/blob-store.ts';
import type { Db } from '../db/client.ts';
import { DomainError, NotFoundError } from '../errors.ts';
import { UUID } from '../ids.ts';
import { sameJson } from '../json/same-json.ts';
import { PROVISION_STORAGE } from '../temporal/workflow-contract.ts';
import type { WorkflowsPort } from '../temporal/workflows.port.ts';
import type { BackendDeps, BackendDriver } from './backends/backend.ts';
import { createBlobBackend } from './backends/blob.ts';
import { createDocumentdbBackend } from './backends/documentdb.ts';
import { createPostgresqlBackend } from './backends/postgresql.ts';
import { createSearchBackend } from './backends/search.ts';
import { createIndexBuilds } from './index-builds.ts';
import { currentDatabase, findTenant, listStorageRows, recordReady, type StorageRow } from './storage.repo.ts';
import {
  STORAGE_BACKENDS,
  type BackendStatus,
  type ProvisionStorageRequest,
  type StorageBackend,
  type StorageChange,
  type StorageLocation,
  type StorageReadiness,
} from './storage.schema.ts';

export interface StorageDeps {
  db: Db;
  blobs: BlobStore;
  workflows?: WorkflowsPort;
  refusedChunks?: BackendDeps['refusedChunks'];
  log?: (message: string, error?: unknown) => void;
}

const routingChange = (backend: StorageBackend, location: StorageLocation): StorageChange => ({
  backend,
  action: 'record',
  object: 'routing',
  name: backend,
  description: `record ${backend} as ready, served by ${location.store}${location.prefix ? ` under ${location.prefix}` : location.database ? ` (database ${location.database}, schema ${location.schema})` : ''}`,
});

export type StorageBackends = ReturnType<typeof createStorageBackends>;

/**
 * What the storage API and the provisioning steps share: the backends' drivers, each backend
 * reconciled (planned, or applied and recorded `ready`), and runs of workflow `tenant-<id>-storage`.
 */
export function createStorageBackends(deps: StorageDeps) {
  const { db } = deps;
  let database: Promise<{ database: string; schema: string }> | undefined;
  const backendDeps: BackendDeps = {
    db,
    blobs: deps.blobs,
    refusedChunks: deps.refusedChunks,
    database: () => (database ??= db.system((tx) => currentDatabase(tx)).catch((error: unknown) => ((database = undefined), Promise.reject(error)))),
  };
  const indexBuilds = createIndexBuilds(backendDeps, deps.log);
  const drivers: Record<StorageBackend, BackendDriver> = {
    postgresql: createPostgresqlBackend(backendDeps, indexBuilds),
    documentdb: createDocumentdbBackend(backendDeps),
    blob: createBlobBackend(backendDeps),
    search: createSearchBackend(backendDeps),
  };
  const workflows = () => {
    if (!deps.workflows) throw new DomainError('INTERNAL_ERROR', 'workflow engine is not configured');
    return deps.workflows;
  };

  /** The tenant must exist and not be deleted; a tenant still being provisioned qualifies. */
  async function requireTenant(tenantId: string): Promise<void> {
    const tenant = UUID.test(tenantId) ? await db.system((tx) => findTenant(tx, tenantId)) : undefined;
    if (!tenant || tenant.deleted || tenant.status === 'deleted') throw new NotFoundError(`tenant ${tenantId}`);
  }

  async function rowsByBackend(tenantId: string): Promise<Map<StorageBackend, StorageRow>> {
    return new Map((await db.inTenant(tenantId, (tx) => listStorageRows(tx))).map((row) => [row.backend, row]));
  }

  /** Each backend's state from the tenant's storage rows (a backend without a row is `not_provisioned`), without the workflow run. */
  async function readiness(tenantId: string): Promise<StorageReadiness> {
    const rows = await rowsByBackend(tenantId);
    const backends: BackendStatus[] = [];
    for (const backend of STORAGE_BACKENDS) {
      const row = rows.get(backend);
      backends.push(
        row
          ? { backend, status: row.status, location: row.location, provisionedAt: row.provisionedAt, updatedAt: row.updatedAt, error: row.error }
          : { backend, status: 'not_provisioned', location: await drivers[backend].location(tenantId), provisionedAt: null, updatedAt: null, error: null },
      );
    }
    return { tenantId, ready: backends.every((b) => b.status === 'ready'), backends };
  }

  async function reconcile(tenantId: string, backend: StorageBackend, apply: boolean, rebuildSearch: boolean, signal?: AbortSignal): Promise<StorageChange[]> {
    await requireTenant(tenantId);
    const driver = drivers[backend];
    const changes = await driver.reconcile(tenantId, { apply, rebuildSearch, signal });
    // A step cancelled after its last statement does not record the backend ready.
    signal?.throwIfAborted();
    const location = await driver.location(tenantId);
    const routed = await db.inTenant(tenantId, async (tx) => {
      const row = (await listStorageRows(tx)).find((r) => r.backend === backend);
      if (row?.status === 'ready' && sameJson(row.location, location)) return true;
      if (apply) await recordReady(tx, backend, location);
      return false;
    });
    return routed ? changes : [...changes, routingChange(backend, location)];
  }

  /** Starts workflow `tenant-<id>-storage` for `request` (a run under way is joined) and returns its id. */
  async function startStorageRun(request: ProvisionStorageRequest): Promise<string> {
    const workflowId = PROVISION_STORAGE.workflowId(request.tenantId);
    await workflows().start(PROVISION_STORAGE.type, { workflowId, args: [request], tenantId: request.tenantId, workflowKey: PROVISION_STORAGE.key });
    return workflowId;
  }

  return { backendDeps, drivers, indexBuilds, workflows, requireTenant, rowsByBackend, readiness, reconcile, startStorageRun };
}
