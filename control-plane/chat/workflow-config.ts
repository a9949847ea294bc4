import type { Actor } from '../identity/identity.schema.ts';
import { systemActor } from '../identity/system-actor.ts';
import { UUID } from '../ids.ts';
import type { ResourcesService } from '../resources/resources.service.ts';
import type { Resource } from '../resources/resources.schema.ts';
import type { ModelChoice } from './answering.ts';

/** The built-in object types (migration 0013) that configure v4 workflows and their AI runtime. */
export const WORKFLOW_CONFIG_TYPE = 'shared-workflow-config';
export const CHATBOT_CONFIG_TYPE = 'shared-chatbot-config';
export const AI_PROFILE_TYPE = 'shared-ai-profile';

/** The stage a workflow configured without stages has: the `svc chat` default. */
export const DEFAULT_STAGE = 'chat';

/** AI profile providers the platform answers with itself; any other names the OpenAI-compatible endpoint. */
export const LOCAL_PROVIDERS: ReadonlySet<string> = new Set(['local', 'builtin']);

export interface WorkflowStage {
  id: string;
  displayName?: string;
  prompt?: string;
}

export interface WorkflowConfig {
  resourceId: string;
  workflowKey: string;
  displayName?: string;
  status: 'active' | 'draft';
  stages: WorkflowStage[];
  aiProfileKey?: string;
}

export interface ChatbotConfig {
  resourceId: string;
  stage?: string;
  aiProfileKey?: string;
  systemPrompt?: string;
  retrieval?: { enabled?: boolean; types?: string[]; limit?: number };
}

export interface AiProfile {
  resourceId: string;
  profileKey: string;
  provider: string;
  model?: string;
  temperature?: number;
  maxTokens?: number;
  systemPrompt?: string;
}

/** What binds a workflow to an AI runtime: its chatbot configuration and AI profile, when it has them. */
export interface WorkflowBinding {
  workflow: WorkflowConfig;
  chatbot?: ChatbotConfig;
  profile?: AiProfile;
}

type Data = Record<string, unknown>;
const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

function workflowOf(resource: Resource): WorkflowConfig {
  const data = resource.data as Data;
  const stages = Array.isArray(data.stages) ? (data.stages as Data[]) : [];
  return {
    resourceId: resource.id,
    workflowKey: String(data.workflowKey),
    displayName: text(data.displayName),
    status: data.status === 'draft' ? 'draft' : 'active',
    stages: stages.map((s) => ({ id: String(s.id), displayName: text(s.displayName), prompt: text(s.prompt) })),
    aiProfileKey: text(data.aiProfileKey),
  };
}

/** The stages of a workflow; one without any has the single stage `chat`. */
export const stagesOf = (workflow: WorkflowConfig): WorkflowStage[] => (workflow.stages.length ? workflow.stages : [{ id: DEFAULT_STAGE }]);

/** The model an AI profile names (none: the platform's default). */
export function modelChoiceOf(profile: AiProfile | undefined): ModelChoice | undefined {
  if (!profile) return undefined;
  return LOCAL_PROVIDERS.has(profile.provider) ? { provider: 'local' } : { provider: 'remote', model: profile.model };
}

/**
 * Reads a tenant's workflow configuration resources as the platform (whatever the caller may
 * read): the workflow by its key (or its resource id), and its binding: the active chatbot
 * configuration of the stage (else the workflow's one without a stage) and the AI profile that it,
 * else the workflow, names.
 */
export function createWorkflowConfigs(deps: { resources: Pick<ResourcesService, 'list' | 'get'> }) {
  const all = async (tenantId: string, type: string, filter: Record<string, string>) =>
    (await deps.resources.list(systemActor(tenantId), { type, filter, sort: 'createdAt', limit: 100 })).items;

  async function findWorkflow(tenantId: string, key: string): Promise<WorkflowConfig | undefined> {
    const [byKey] = await all(tenantId, WORKFLOW_CONFIG_TYPE, { workflowKey: key });
    if (byKey) return workflowOf(byKey);
    if (!UUID.test(key)) return undefined;
    const byId = await deps.resources.get(systemActor(tenantId), WORKFLOW_CONFIG_TYPE, key).catch(() => undefined);
    return byId ? workflowOf(byId) : undefined;
  }

  async function bindingOf(tenantId: string, workflow: WorkflowConfig, stage?: string): Promise<WorkflowBinding> {
    const chatbots = (await all(tenantId, CHATBOT_CONFIG_TYPE, { workflowKey: workflow.workflowKey })).filter((r) => (r.data as Data).status === 'active');
    // A stage takes its own configuration, else the workflow's without a stage; the workflow as a whole takes any.
    const chosen =
      (stage && chatbots.find((r) => (r.data as Data).stage === stage)) || chatbots.find((r) => !text((r.data as Data).stage)) || (stage === undefined ? chatbots[0] : undefined);
    const chatbotData = chosen?.data;
    const chatbot: ChatbotConfig | undefined = chosen
      ? {
          resourceId: chosen.id,
          stage: text(chatbotData!.stage),
          aiProfileKey: text(chatbotData!.aiProfileKey),
          systemPrompt: text(chatbotData!.systemPrompt),
          retrieval: chatbotData!.retrieval as ChatbotConfig['retrieval'],
        }
      : undefined;
    const profileKey = chatbot?.aiProfileKey ?? workflow.aiProfileKey;
    const [profileResource] = profileKey ? await all(tenantId, AI_PROFILE_TYPE, { profileKey }) : [];
    const p = profileResource?.data;
    const profile: AiProfile | undefined = profileResource
      ? {
          resourceId: profileResource.id,
          profileKey: String(p!.profileKey),
          provider: String(p!.provider),
          model: text(p!.model),
          temperature: typeof p!.temperature === 'number' ? p!.temperature : undefined,
          maxTokens: typeof p!.maxTokens === 'number' ? p!.maxTokens : undefined,
          systemPrompt: text(p!.systemPrompt),
        }
      : undefined;
    return { workflow, chatbot, profile };
  }

  return {
    findWorkflow,
    bindingOf,
    /** Every workflow the tenant configured. */
    async listWorkflows(actor: Pick<Actor, 'tenantId'>): Promise<WorkflowConfig[]> {
      return (await all(actor.tenantId, WORKFLOW_CONFIG_TYPE, {})).map(workflowOf);
    },
  };
}

export type WorkflowConfigs = ReturnType<typeof createWorkflowConfigs>;
