import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import type { Decision } from '../capabilities/capabilities.schema.ts';
import type { Db } from '../db/client.ts';
import { ConflictError, ForbiddenError, NotFoundError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { systemActor } from '../identity/system-actor.ts';
import { streamLimit } from './answer-starts.ts';
import type { AnsweringService } from './answering.ts';
import { countLiveStreams, messagesToday } from './chat.repo.ts';
import type { WorkflowChatInput, WorkflowRuntime } from './chat.schema.ts';
import { answerSpecOf, type AnswerSpec } from './workflow-answers.ts';
import { modelChoiceOf, stagesOf, type WorkflowBinding, type WorkflowConfig, type WorkflowConfigs } from './workflow-config.ts';

/**
 * Whether a tenant's workflow can chat now, and why: what v4 chat checks before it answers, and
 * what the runtime routes report.
 */
export function createWorkflowRuntimes(deps: {
  db: Db;
  answering: Pick<AnsweringService, 'canRun'>;
  capabilities: Pick<CapabilitiesService, 'evaluate' | 'catalog'>;
  configs: WorkflowConfigs;
}) {
  const { db, answering, configs } = deps;


  /** Live streams and today's messages of a tenant, against its limits. */
  async function usageOf(tenantId: string, decision: Decision) {
    const { live, today } = await db.inTenant(tenantId, async (tx) => ({ live: await countLiveStreams(tx), today: await messagesToday(tx) }));
    return { liveStreams: live, streamLimit: streamLimit(decision), messagesToday: today, messagesPerDay: decision.limits.maxMessagesPerDay };
  }

  /**
   * Whether a workflow can chat now, and why: its configuration (none: `unsupported`; a draft:
   * `blocked`), the `ai.chat` capability (outside the plan: `paid_upgrade_required`; refused
   * otherwise: `blocked`), its AI runtime binding (none, or a provider this platform cannot
   * reach: `operator_required`), then the tenant's chat limits (`rate_limited`).
   */
  async function runtimeOf(
    tenantId: string,
    key: string,
    options: { stage?: string; checkLimits?: boolean } = {},
  ): Promise<{ runtime: WorkflowRuntime; workflow?: WorkflowConfig; binding?: WorkflowBinding; decision?: Decision }> {
    const workflow = await configs.findWorkflow(tenantId, key);
    const base = { workflowKey: workflow?.workflowKey ?? key, displayName: workflow?.displayName ?? null, provider: null, model: null, stages: workflow ? stagesOf(workflow).map((s) => s.id) : [] };
    const as = (status: WorkflowRuntime['status'], reason: string, extra: Partial<WorkflowRuntime> = {}): WorkflowRuntime => ({ ...base, status, reason, ...extra });
    if (!workflow) return { runtime: as('unsupported', `no workflow configuration (shared-workflow-config) of this tenant has the key "${key}"`) };
    if (options.stage !== undefined && !stagesOf(workflow).some((s) => s.id === options.stage)) throw new NotFoundError(`stage "${options.stage}" of workflow "${key}"`);
    if (workflow.status === 'draft') return { runtime: as('blocked', `workflow "${workflow.workflowKey}" is a draft; set its status to active`), workflow };
    const evaluation = await deps.capabilities.evaluate(systemActor(tenantId), { capabilities: ['ai.chat'], context: {} });
    const decision = evaluation.decisions['ai.chat']!;
    if (!decision.allowed) {
      const inPlan = deps.capabilities.catalog().items.find((c) => c.key === 'ai.chat')?.plans[evaluation.plan].included;
      return { runtime: as(inPlan ? 'blocked' : 'paid_upgrade_required', `capability ai.chat is not available to this tenant: ${decision.reason}`), workflow, decision };
    }
    const binding = await configs.bindingOf(tenantId, workflow, options.stage);
    if (!binding.chatbot) {
      return { runtime: as('operator_required', `no AI runtime is bound to workflow "${workflow.workflowKey}": it has no active shared-chatbot-config`), workflow, binding, decision };
    }
    const profileKey = binding.chatbot.aiProfileKey ?? workflow.aiProfileKey;
    if (!binding.profile) {
      const reason = profileKey ? `AI profile "${profileKey}" (shared-ai-profile) does not exist` : `the chatbot configuration of workflow "${workflow.workflowKey}" names no AI profile`;
      return { runtime: as('operator_required', reason), workflow, binding, decision };
    }
    const bound = { provider: binding.profile.provider, model: binding.profile.model ?? null };
    if (!answering.canRun(modelChoiceOf(binding.profile)!)) {
      return {
        runtime: as('operator_required', `provider "${binding.profile.provider}" needs the platform's OpenAI-compatible endpoint (AI_BASE_URL, AI_API_KEY, AI_MODEL), which is not configured`, bound),
        workflow,
        binding,
        decision,
      };
    }
    if (options.checkLimits !== false) {
      const usage = await usageOf(tenantId, decision);
      if (usage.liveStreams >= usage.streamLimit) return { runtime: as('rate_limited', `all ${usage.streamLimit} concurrent chat streams of the tenant are in use`, bound), workflow, binding, decision };
      if (usage.messagesPerDay !== undefined && usage.messagesToday >= usage.messagesPerDay) {
        return { runtime: as('rate_limited', `the tenant's ${usage.messagesPerDay} chat messages of today are spent`, bound), workflow, binding, decision };
      }
    }
    return { runtime: as('available', `answers through the ${bound.provider} provider${bound.model ? ` (model ${bound.model})` : ''}`, bound), workflow, binding, decision };
  }

  /** A v4 chat request as an answer to start: refused as its workflow's runtime status says (404, 403, 409). */
  async function workflowAnswer(actor: Actor, input: WorkflowChatInput): Promise<{ spec: AnswerSpec; decision: Decision }> {
    const { runtime, workflow, binding, decision } = await runtimeOf(actor.tenantId, input.workflowId, { stage: input.stage, checkLimits: false });
    if (runtime.status === 'unsupported') throw new NotFoundError(`workflow "${input.workflowId}"`);
    if (runtime.status === 'blocked' || runtime.status === 'paid_upgrade_required') throw new ForbiddenError(runtime.reason);
    if (runtime.status === 'operator_required') throw new ConflictError(runtime.reason, { status: runtime.status });
    return { spec: answerSpecOf(actor, input, workflow!, binding!), decision: decision! };
  }

  return {
    runtimeOf,
    workflowAnswer,

    /** Whether a tenant's workflow can chat now, and why (see `runtimeOf`). */
    async workflowRuntime(tenantId: string, key: string): Promise<WorkflowRuntime> {
      return (await runtimeOf(tenantId, key)).runtime;
    },

    /** Every workflow the tenant configured. */
    listWorkflows: (tenantId: string) => configs.listWorkflows({ tenantId }),
  };
}
