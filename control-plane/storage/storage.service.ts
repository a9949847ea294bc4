import type { Actor } from '../identity/identity.schema.ts';
import { sameJson } from '../json/same-json.ts';
import { PROVISION_STORAGE, PROVISION_TENANT } from '../temporal/workflow-contract.ts';
import { applyIndexes, planIndexes } from './backends/postgresql.ts';
import { createStorageBackends, type StorageBackends, type StorageDeps } from './storage-backends.ts';
import type { StorageRow } from './storage.repo.ts';
import {
  STORAGE_BACKENDS,
  type BackendSelection,
  type DoctorCheck,
  type DoctorReport,
  type ProvisionInput,
  type ProvisionOutcome,
  type ProvisionStorageResult,
  type StorageBackend,
  type StorageChange,
  type StorageLocation,
  type StorageStatus,
  type SyncSchemaInput,
  type SyncSchemaOutcome,
} from './storage.schema.ts';

/** How long a provision request waits for its workflow before answering `running`. */
const PROVISION_WAIT_MS = 20_000;

export const backendsOf = (selection: BackendSelection): StorageBackend[] => (selection === 'all' ? [...STORAGE_BACKENDS] : [selection]);

const worst = (checks: readonly DoctorCheck[]) => (checks.some((c) => c.result === 'fail') ? 'fail' : checks.some((c) => c.result === 'warn') ? 'warn' : 'ok');

export type StorageService = ReturnType<typeof createStorageService>;

/**
 * A tenant's storage, for the API: routing and status per backend, diagnostics, provisioning (a
 * Temporal workflow `tenant-<id>-storage` whose steps are in storage.jobs.ts) and index
 * reconciliation from object type metadata. What the operator calls is in storage.declared.ts.
 */
export function createStorageService(deps: StorageDeps & { backends?: StorageBackends }) {
  const { backendDeps, drivers, indexBuilds, workflows, rowsByBackend, readiness, reconcile, startStorageRun } = deps.backends ?? createStorageBackends(deps);

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
  };
}
