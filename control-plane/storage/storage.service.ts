import type { BlobStore } from '../blobs/blob-store.ts';
import type { Db } from '../db/client.ts';
import { DomainError, NotFoundError } from '../errors.ts';
import { sameJson } from '../json/same-json.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { PROVISION_STORAGE, PROVISION_TENANT } from '../temporal/workflow-contract.ts';
import type { WorkflowsPort } from '../temporal/workflows.port.ts';
import type { BackendDeps, BackendDriver } from './backends/backend.ts';
import { createBlobBackend } from './backends/blob.ts';
import { createDocumentdbBackend } from './backends/documentdb.ts';
import { createPostgresqlBackend, planIndexes, applyIndexes } from './backends/postgresql.ts';
import { createSearchBackend } from './backends/search.ts';
import { createIndexBuilds } from './index-builds.ts';
import { currentDatabase, findTenant, listStorageRows, markProvisioning, recordFailed, recordReady, type StorageRow } from './storage.repo.ts';
import {
  STORAGE_BACKENDS,
  type BackendSelection,
  type BackendStatus,
  type DoctorCheck,
  type DoctorReport,
  type ProvisionInput,
  type ProvisionOutcome,
  type ProvisionStorageRequest,
  type ProvisionStorageResult,
  type StorageBackend,
  type StorageChange,
  type StorageLocation,
  type StorageReadiness,
  type StorageStatus,
  type SyncSchemaInput,
  type SyncSchemaOutcome,
} from './storage.schema.ts';
import { UUID } from '../ids.ts';

/** How long a provision request waits for its workflow before answering `running`. */
const PROVISION_WAIT_MS = 20_000;

export const backendsOf = (selection: BackendSelection): StorageBackend[] => (selection === 'all' ? [...STORAGE_BACKENDS] : [selection]);

const routingChange = (backend: StorageBackend, location: StorageLocation): StorageChange => ({
  backend,
  action: 'record',
  object: 'routing',
  name: backend,
  description: `record ${backend} as ready, served by ${location.store}${location.prefix ? ` under ${location.prefix}` : location.database ? ` (database ${location.database}, schema ${location.schema})` : ''}`,
});

const worst = (checks: readonly DoctorCheck[]) => (checks.some((c) => c.result === 'fail') ? 'fail' : checks.some((c) => c.result === 'warn') ? 'warn' : 'ok');

export type StorageService = ReturnType<typeof createStorageService>;

/**
 * A tenant's storage: routing and status per backend, diagnostics, provisioning (a Temporal
 * workflow `tenant-<id>-storage` whose activities are `beginProvisioning`, `ensureBackend`,
 * `planBackend` and `failProvisioning` below) and index reconciliation from object type metadata.
 */
export function createStorageService(deps: { db: Db; blobs: BlobStore; workflows?: WorkflowsPort; refusedChunks?: BackendDeps['refusedChunks']; log?: (message: string, error?: unknown) => void }) {
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

  async function status(tenantId: string): Promise<StorageStatus> {
    return { ...(await readiness(tenantId)), workflow: await provisioningRun(tenantId) };
  }

  /**
   * The run that provisions the tenant's storage: `tenant-<id>-storage` if the storage routes have
   * started one, else the tenant's own provisioning, which provisions a new tenant's storage.
   */
  async function provisioningRun(tenantId: string): Promise<StorageStatus['workflow']> {
    const never = { id: PROVISION_STORAGE.workflowId(tenantId), status: null };
    if (!deps.workflows) return never;
    for (const id of [PROVISION_STORAGE.workflowId(tenantId), PROVISION_TENANT.workflowId(tenantId)]) {
      const run = await deps.workflows.status(id).catch(() => 'unknown');
      if (run !== undefined) return { id, status: run };
    }
    return never;
  }

  function statusCheck(backend: StorageBackend, row: StorageRow | undefined, location: StorageLocation): DoctorCheck {
    const hint = `provision the backend: POST .../storage/provision with {"backend": "${backend}"}`;
    const base = { backend, name: 'status' };
    if (!row) return { ...base, result: 'warn', message: 'not provisioned', hint };
    if (row.status === 'failed') return { ...base, result: 'fail', message: `provisioning failed: ${row.error ?? 'unknown error'}`, hint: `fix the cause, then ${hint}` };
    if (row.status === 'provisioning') return { ...base, result: 'warn', message: 'provisioning is under way', hint: 'wait for the workflow; GET .../storage shows its status' };
    if (!sameJson(row.location, location)) return { ...base, result: 'warn', message: 'provisioned at another location than the one now configured', hint };
    return { ...base, result: 'ok', message: `ready since ${row.provisionedAt}`, hint: null };
  }

  return {
    /** The background builds of the indexes object types declare (index-builds.ts). */
    indexBuilds,

    /** Routing and provisioning status of every backend of the actor's tenant. */
    status: (actor: Actor) => status(actor.tenantId),

    /** The same without the workflow run, for the operator: it looks often, and Temporal need not answer each time. */
    readiness: (actor: Actor) => readiness(actor.tenantId),

    /** Runs every backend's checks; changes nothing the tenant can see (the blob probe removes itself). */
    async doctor(actor: Actor): Promise<DoctorReport> {
      const rows = await rowsByBackend(actor.tenantId);
      const checks: DoctorCheck[] = [];
      for (const backend of STORAGE_BACKENDS) {
        const driver = drivers[backend];
        checks.push(statusCheck(backend, rows.get(backend), await driver.location(actor.tenantId)), ...(await driver.checks(actor.tenantId)));
      }
      const count = (result: DoctorCheck['result']) => checks.filter((c) => c.result === result).length;
      return { tenantId: actor.tenantId, result: worst(checks), summary: { ok: count('ok'), warn: count('warn'), fail: count('fail') }, checks };
    },

    /**
     * A dry run lists what provisioning would change. A real run starts workflow
     * `tenant-<id>-storage` (a run already under way is joined, not duplicated) and waits a bounded
     * time for it; `state` then tells whether it completed, failed or is still running.
     */
    async provision(actor: Actor, input: ProvisionInput): Promise<ProvisionOutcome> {
      const base = { tenantId: actor.tenantId, backend: input.backend, dryRun: input.dryRun, rebuildSearch: input.rebuildSearch };
      if (input.dryRun) {
        const changes: StorageChange[] = [];
        for (const backend of backendsOf(input.backend)) changes.push(...(await reconcile(actor.tenantId, backend, false, input.rebuildSearch)));
        return { ...base, workflowId: null, state: 'planned', changes, error: null, storage: await status(actor.tenantId) };
      }
      const workflowId = await startStorageRun({ tenantId: actor.tenantId, backend: input.backend, dryRun: false, rebuildSearch: input.rebuildSearch });
      const closed = await workflows().result<ProvisionStorageResult>(workflowId, PROVISION_WAIT_MS);
      const storage = await status(actor.tenantId);
      if (!closed) return { ...base, workflowId, state: 'running', changes: [], error: null, storage };
      const state = closed.status === 'completed' ? 'completed' : closed.status === 'timed_out' ? 'timed_out' : closed.status === 'failed' ? 'failed' : 'cancelled';
      return { ...base, workflowId, state, changes: closed.value?.changes ?? [], error: closed.error ?? null, storage };
    },

    /**
     * Starts workflow `tenant-<id>-storage` for `backends` without waiting for it (a run under way is
     * joined), for the operator: it follows the backends' status instead.
     */
    async startProvisioning(actor: Actor, backends: StorageBackend[]): Promise<void> {
      await startStorageRun({ tenantId: actor.tenantId, backend: 'all', backends, dryRun: false, rebuildSearch: false });
    },

    /**
     * Reconciles storage with object type metadata: for `postgresql`, the expression indexes that
     * `x-indexed` fields ask for (created concurrently, dropped with their last claim). The other
     * backends derive nothing from object types yet, so they never list changes. Idempotent.
     */
    async syncSchema(actor: Actor, input: SyncSchemaInput): Promise<SyncSchemaOutcome> {
      const outcome: SyncSchemaOutcome = { tenantId: actor.tenantId, backend: input.backend, dryRun: input.dryRun, changes: [], skipped: [] };
      if (!backendsOf(input.backend).includes('postgresql')) return outcome;
      const plan = await planIndexes(backendDeps, actor.tenantId);
      if (!input.dryRun) await applyIndexes(backendDeps, actor.tenantId, plan);
      return { ...outcome, changes: plan.changes, skipped: plan.skipped };
    },

    /** Activity: marks the backends `provisioning` (those already `ready` stay so). */
    async beginProvisioning(request: { tenantId: string; backends: StorageBackend[] }): Promise<void> {
      await requireTenant(request.tenantId);
      const locations: Array<{ backend: StorageBackend; location: StorageLocation }> = [];
      for (const backend of request.backends) locations.push({ backend, location: await drivers[backend].location(request.tenantId) });
      await db.inTenant(request.tenantId, async (tx) => {
        for (const { backend, location } of locations) await markProvisioning(tx, backend, location);
      });
    },

    /**
     * Activity: ensures one backend for the tenant and records it `ready`; returns what changed.
     * Safe to retry. `signal` (the activity's cancellation) stops its statements in PostgreSQL.
     */
    ensureBackend: (request: { tenantId: string; backend: StorageBackend; rebuildSearch: boolean }, signal?: AbortSignal) =>
      reconcile(request.tenantId, request.backend, true, request.rebuildSearch, signal),

    /** Activity: what `ensureBackend` would change, changing nothing. */
    planBackend: (request: { tenantId: string; backend: StorageBackend; rebuildSearch: boolean }, signal?: AbortSignal) =>
      reconcile(request.tenantId, request.backend, false, request.rebuildSearch, signal),

    /**
     * Activity: records why provisioning stopped: `backend` failed with `error`, and the backends in
     * `pending` (never reached) are marked failed unless they were already `ready`.
     */
    async failProvisioning(request: { tenantId: string; backend?: StorageBackend; pending: StorageBackend[]; error: string }): Promise<void> {
      const tenant = await db.system((tx) => findTenant(tx, request.tenantId)).catch(() => undefined);
      if (!tenant) return;
      const rows = await rowsByBackend(request.tenantId);
      const failures: Array<[StorageBackend, string]> = request.backend ? [[request.backend, request.error]] : [];
      for (const backend of request.pending) {
        if (backend !== request.backend && rows.get(backend)?.status !== 'ready') failures.push([backend, `not provisioned: ${request.backend ? `${request.backend} failed first` : request.error}`]);
      }
      for (const [backend, error] of failures) {
        const location = await drivers[backend].location(request.tenantId);
        await db.inTenant(request.tenantId, (tx) => recordFailed(tx, backend, location, error));
      }
    },
  };
}
