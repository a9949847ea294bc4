import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import type { Db } from '../db/client.ts';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { systemActor } from '../identity/system-actor.ts';
import type { OrchestrateService } from '../orchestrate/orchestrate.service.ts';
import type { WebhookSecrets } from './webhook-secrets.ts';
import { newWebhookSecret } from './webhook-signature.ts';
import { countEndpoints, deleteEndpoint, findEndpoint, insertEndpoint, listEndpoints, replaceSecret, updateEndpoint } from './webhooks.repo.ts';
import type { CreateEndpointInput, Endpoint, EndpointWithSecret, RotatedEndpoint, UpdateEndpointInput } from './webhooks.schema.ts';

/** How long the secret a rotation replaces keeps working, unless the rotation revokes it. */
export const WEBHOOK_SECRET_OVERLAP_SECONDS = 24 * 3600;

/** A tenant administrator's endpoints: one per source, with its target workflow and a secret shown once (at creation and at each rotation). */
export function createWebhookEndpoints(deps: {
  db: Db;
  capabilities: Pick<CapabilitiesService, 'require'>;
  orchestrate: Pick<OrchestrateService, 'listWorkflows'>;
  secrets: WebhookSecrets;
}) {
  const { db } = deps;
  const { sealed } = deps.secrets;
  async function assertWorkflow(tenantId: string, workflowId: string): Promise<void> {
    const workflows = await deps.orchestrate.listWorkflows(systemActor(tenantId));
    if (!workflows.some((w) => w.id === workflowId)) throw ValidationError.field('workflowId', `names no workflow of this tenant ("${workflowId}")`);
  }

  async function endpointOrThrow(actor: Actor, source: string): Promise<Endpoint> {
    const endpoint = await db.inTenant(actor.tenantId, (tx) => findEndpoint(tx, source));
    if (!endpoint) throw new NotFoundError(`webhook endpoint "${source}"`);
    return endpoint;
  }

  return {
    endpointOrThrow,

    async createEndpoint(actor: Actor, input: CreateEndpointInput): Promise<EndpointWithSecret> {
      const { limits } = await deps.capabilities.require(actor.tenantId, 'webhooks');
      await assertWorkflow(actor.tenantId, input.workflowId);
      const secret = newWebhookSecret();
      const endpoint = await db.inTenant(actor.tenantId, async (tx) => {
        if (limits.maxEndpoints !== undefined && (await countEndpoints(tx)) >= limits.maxEndpoints) {
          throw new ForbiddenError(`capability webhooks allows at most ${limits.maxEndpoints} endpoints for this tenant`);
        }
        return insertEndpoint(tx, input, sealed(actor.tenantId, input.source, secret), actor.userId);
      });
      if (!endpoint) throw new ConflictError(`a webhook endpoint for source "${input.source}" exists already`, { source: input.source });
      return { ...endpoint, secret };
    },

    listEndpoints: (actor: Actor) => db.inTenant(actor.tenantId, (tx) => listEndpoints(tx)),

    getEndpoint: (actor: Actor, source: string) => endpointOrThrow(actor, source),

    async updateEndpoint(actor: Actor, input: UpdateEndpointInput): Promise<Endpoint> {
      await deps.capabilities.require(actor.tenantId, 'webhooks');
      if (input.workflowId !== undefined) await assertWorkflow(actor.tenantId, input.workflowId);
      const endpoint = await db.inTenant(actor.tenantId, (tx) => updateEndpoint(tx, input));
      if (!endpoint) throw new NotFoundError(`webhook endpoint "${input.source}"`);
      return endpoint;
    },

    /** Removes the endpoint and its deliveries; its secret stops working at once. */
    async deleteEndpoint(actor: Actor, source: string): Promise<void> {
      if (!(await db.inTenant(actor.tenantId, (tx) => deleteEndpoint(tx, source)))) throw new NotFoundError(`webhook endpoint "${source}"`);
    },

    /**
     * A new secret, shown this once. The one it replaces keeps working for
     * {@link WEBHOOK_SECRET_OVERLAP_SECONDS} (until `previousSecretExpiresAt`), or stops at once
     * with `revokePrevious` (a leaked secret); an older one stops at once.
     */
    async rotateSecret(actor: Actor, source: string, options: { revokePrevious?: boolean } = {}): Promise<RotatedEndpoint> {
      await deps.capabilities.require(actor.tenantId, 'webhooks');
      const secret = newWebhookSecret();
      const overlap = options.revokePrevious ? 0 : WEBHOOK_SECRET_OVERLAP_SECONDS;
      const endpoint = await db.system((tx) => replaceSecret(tx, actor.tenantId, source, sealed(actor.tenantId, source, secret), overlap));
      if (!endpoint) throw new NotFoundError(`webhook endpoint "${source}"`);
      return { ...endpoint, secret };
    },
  };
}
