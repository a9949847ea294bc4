import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import type { ChatService } from '../chat/chat.service.ts';
import type { WorkflowRuntime } from '../chat/chat.schema.ts';
import type { Db } from '../db/client.ts';
import { NotFoundError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { TenantsService } from '../tenants/tenants.service.ts';
import { findPendingRequest, insertRequest } from './runtime.repo.ts';
import type { Readiness, RuntimeRequest, RuntimeRequestInput } from './runtime.schema.ts';

export type RuntimeService = ReturnType<typeof createRuntimeService>;

/**
 * Whether a tenant's v4 workflows can run: each workflow's runtime status (derived by chat from
 * its configuration, AI binding, capabilities and limits; a tenant that is not active blocks
 * every one), the requests that ask an operator for a binding, and a builder's readiness report.
 */
export function createRuntimeService(deps: {
  db: Db;
  chat: Pick<ChatService, 'workflowRuntime' | 'listWorkflows'>;
  capabilities: Pick<CapabilitiesService, 'evaluate'>;
  tenants: Pick<TenantsService, 'find'>;
}) {
  const { db } = deps;

  async function activeTenant(tenantId: string) {
    const tenant = await deps.tenants.find(tenantId);
    if (!tenant) throw new NotFoundError('tenant');
    return tenant;
  }

  async function statusOf(tenantId: string, tenantStatus: string, key: string): Promise<WorkflowRuntime> {
    const runtime = await deps.chat.workflowRuntime(tenantId, key);
    if (tenantStatus === 'active' || runtime.status === 'unsupported') return runtime;
    return { ...runtime, status: 'blocked', reason: `the tenant is ${tenantStatus}, not active` };
  }

  return {
    async status(actor: Actor, workflowKey: string): Promise<WorkflowRuntime & { tenantId: string }> {
      const tenant = await activeTenant(actor.tenantId);
      return { tenantId: actor.tenantId, ...(await statusOf(actor.tenantId, tenant.status, workflowKey)) };
    },

    /** Records that the tenant wants an operator to bind the workflow; an open request for it is answered as it is. */
    async request(actor: Actor, input: RuntimeRequestInput): Promise<{ request: RuntimeRequest; created: boolean }> {
      const runtime = await deps.chat.workflowRuntime(actor.tenantId, input.workflow_key);
      const displayName = input.display_name ?? runtime.displayName ?? input.workflow_key;
      return db.inTenant(actor.tenantId, async (tx) => {
        const created = await insertRequest(tx, { workflowKey: input.workflow_key, displayName, reason: input.reason, requestedBy: actor.userId || null });
        if (created) return { request: created, created: true };
        return { request: (await findPendingRequest(tx, input.workflow_key))!, created: false };
      });
    },

    async readiness(actor: Actor, workflowKeys: string[] | undefined): Promise<Readiness> {
      const tenant = await activeTenant(actor.tenantId);
      const evaluation = await deps.capabilities.evaluate(actor, { context: {} });
      const keys = workflowKeys ?? (await deps.chat.listWorkflows(actor.tenantId)).map((w) => w.workflowKey);
      const workflows: WorkflowRuntime[] = [];
      for (const key of keys) workflows.push(await statusOf(actor.tenantId, tenant.status, key));
      return {
        tenant: { id: tenant.id, slug: tenant.slug, name: tenant.name, status: tenant.status, homeRegion: tenant.homeRegion },
        plan: evaluation.plan,
        capabilities: evaluation.decisions,
        workflows,
        ready: tenant.status === 'active' && workflows.every((w) => w.status === 'available'),
      };
    },
  };
}
