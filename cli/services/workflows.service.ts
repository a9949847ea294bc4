import { relative } from 'node:path';
import { invalidInput } from '../errors.ts';
import type { ApiClient } from './api-client.ts';
import { envFilePath, updateEnvFile, type EnvChange } from './env-file.ts';
import { createConfigStore, type ConfigWriteOutcome } from './env.service.ts';
import { createResourcesService, type Resource } from './resources.service.ts';

import {
  AI_PROFILE_TYPE,
  CHATBOT_CONFIG_TYPE,
  DEFAULT_AI_PROVIDER,
  PRODUCT_CONFIG_TYPE,
  RUNTIME_STATUSES,
  WORKFLOW_CONFIG_TYPE,
  WORKFLOW_STATUSES,
  type ProvisionStatus,
} from './workflows.constants.ts';

export { AI_PROFILE_TYPE, CHATBOT_CONFIG_TYPE, DEFAULT_AI_PROVIDER, PRODUCT_CONFIG_TYPE, RUNTIME_STATUSES, WORKFLOW_CONFIG_TYPE, WORKFLOW_STATUSES, type ProvisionStatus };

export interface WorkflowRuntime {
  workflowKey: string;
  status: (typeof RUNTIME_STATUSES)[number];
  reason: string;
  displayName: string | null;
  provider: string | null;
  model: string | null;
  stages: string[];
}

/** `GET /v4/workflows/runtime/{workflowKey}/status`. */
export interface WorkflowStatus extends WorkflowRuntime {
  tenantId: string;
}

export interface Readiness {
  tenant: { id: string; slug: string; name: string; status: string; homeRegion: string | null };
  plan: string;
  capabilities: Record<string, { allowed: boolean; reason: string; [key: string]: unknown }>;
  workflows: WorkflowRuntime[];
  ready: boolean;
}

export interface RuntimeRequest {
  id: string;
  tenantId: string;
  workflowKey: string;
  displayName: string;
  reason: string;
  state: 'pending' | 'approved' | 'rejected';
  requestedBy: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface StageOption {
  id: string;
  displayName?: string;
}

export interface ProvisionOptions {
  tenantId: string;
  workflowKey: string;
  vertical: string;
  displayName?: string;
  usecase: string;
  scopeKey?: string;
  stages: StageOption[];
  stageEnv: Array<{ key: string; stage: string }>;
  stagePrompts: Array<{ stage: string; prompt: string }>;
  workflowEnvKey?: string;
  bindAiRuntime: boolean;
  aiProvider?: string;
  aiModel?: string;
  aiProfileKey?: string;
  status: ProvisionStatus;
  /** The app label recorded on the workflow (and the configuration set `writeAppConfig` writes). */
  label?: string;
  writeLocalEnv: boolean;
  /** The environment of the configuration set to write the workflow's env values to. */
  writeAppConfig?: { label: string; environment: string };
}

export interface ProvisionedResource {
  type: string;
  id: string;
  action: 'created' | 'updated' | 'unchanged';
  version: number;
}

export interface ProvisionResult {
  tenantId: string;
  workflowKey: string;
  status: ProvisionStatus;
  resources: ProvisionedResource[];
  /** The env values the workflow records: its key under the workflow env key, each stage's id under its env key. */
  env: Record<string, string>;
  localEnv?: { file: string; changes: EnvChange[] };
  appConfig?: ConfigWriteOutcome;
}

type Data = Record<string, unknown>;

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v));

/** Without the keys whose value is undefined (the data API's schemas take no undefined). */
const defined = (data: Data): Data => Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined));

/** `support-intake` -> `SVC_WORKFLOW_SUPPORT_INTAKE`: the env key a workflow's key goes under unless `--workflow-env-key` says. */
export const defaultWorkflowEnvKey = (workflowKey: string) => `SVC_WORKFLOW_${workflowKey.toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_|_$/g, '')}`;

const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,99}$/;

/** The stages a provisioned workflow has, with their env keys and prompts applied; refuses options that name a stage it does not have. */
export function planStages(given: StageOption[], stored: Data[] | undefined, stageEnv: ProvisionOptions['stageEnv'], prompts: ProvisionOptions['stagePrompts']): Data[] | undefined {
  const ids = new Set<string>();
  for (const stage of given) {
    if (ids.has(stage.id)) throw invalidInput(`--stage ${stage.id} is given twice`);
    ids.add(stage.id);
  }
  let stages: Data[] | undefined = given.length
    ? given.map((s) => {
        // A stage given again keeps its stored env key and prompt unless the options set them.
        const before = stored?.find((old) => old['id'] === s.id);
        return defined({ id: s.id, displayName: s.displayName ?? (before?.['displayName']), envKey: before?.['envKey'], prompt: before?.['prompt'] });
      })
    : stored?.map((s) => ({ ...s }));
  const named = [...stageEnv.map((e) => e.stage), ...prompts.map((p) => p.stage)];
  // A workflow without stages has the one stage `chat`; naming it writes it out.
  if (!stages?.length && named.length && named.every((id) => id === 'chat')) stages = [{ id: 'chat' }];
  const find = (id: string, option: string) => {
    const stage = stages?.find((s) => s['id'] === id);
    if (!stage) throw invalidInput(`${option} names stage "${id}", which the workflow does not have (stages: ${stages?.length ? stages.map((s) => s['id']).join(', ') : 'chat'}); add it with --stage ${id}`);
    return stage;
  };
  for (const { key, stage } of stageEnv) find(stage, '--stage-env')['envKey'] = key;
  for (const { stage, prompt } of prompts) find(stage, '--stage-prompt')['prompt'] = prompt;
  return stages;
}

/** `id[:Display Name]`. */
export function parseStage(value: string): StageOption {
  const at = value.indexOf(':');
  const id = (at < 0 ? value : value.slice(0, at)).trim();
  const displayName = at < 0 ? undefined : value.slice(at + 1).trim() || undefined;
  if (!/^[a-z0-9]+([-_][a-z0-9]+)*$/.test(id) || id.length > 100) throw invalidInput(`--stage ${value}: the id must be lower-case letters and digits with - or _ (at most 100), then optionally :Display Name`);
  return { id, displayName };
}

/** `KEY=stage-id`. */
export function parseStageEnv(value: string): { key: string; stage: string } {
  const at = value.indexOf('=');
  const key = value.slice(0, at).trim();
  const stage = value.slice(at + 1).trim();
  if (at < 0 || !ENV_KEY.test(key) || !stage) throw invalidInput(`--stage-env ${value}: expected KEY=stage-id, KEY an environment variable name`);
  return { key, stage };
}

/** `stage=prompt`. */
export function parseStagePrompt(value: string): { stage: string; prompt: string } {
  const at = value.indexOf('=');
  const stage = value.slice(0, at).trim();
  const prompt = value.slice(at + 1).trim();
  if (at < 0 || !stage || !prompt) throw invalidInput(`--stage-prompt ${value}: expected stage=prompt`);
  return { stage, prompt };
}

export function checkEnvKey(key: string, option: string): string {
  if (!ENV_KEY.test(key)) throw invalidInput(`${option} ${key}: must be an environment variable name (letters, digits and _, not starting with a digit)`);
  return key;
}

/** Workflow configuration and runtime over v4: provisioning through the data API, then status, readiness and binding requests. */
export function createWorkflowsService(api: ApiClient) {
  const resources = createResourcesService(api);

  /** The tenant's resources of `type` matching `where`, oldest first. */
  const find = async (tenantId: string, type: string, where: Data) => (await resources.list(tenantId, type, { where, sort: 'created_at', limit: 100 })).data;

  /** Creates `data`, or brings the existing resource to it (unchanged when it already is). */
  async function upsert(tenantId: string, type: string, existing: Resource | undefined, data: Data): Promise<ProvisionedResource> {
    if (!existing) {
      const created = await resources.create(tenantId, type, data);
      return { type, id: created.id, action: 'created', version: created.version };
    }
    if (canonical(existing.data) === canonical(data)) return { type, id: existing.id, action: 'unchanged', version: existing.version };
    const updated = await resources.update(tenantId, type, existing.id, data, existing.version);
    return { type, id: updated.id, action: 'updated', version: updated.version };
  }

  return {
    /**
     * Upserts the workflow's configuration: `shared-workflow-config` (by workflow key) and
     * `vertical-product-config` (by vertical and workflow key); with `bindAiRuntime` also
     * `shared-ai-profile` (by profile key) and the workflow's `shared-chatbot-config` without a
     * stage. Each is listed, then created or updated (left as it is when nothing differs). Fields
     * the options do not set keep their stored values. Then, when asked, writes the workflow's env
     * values to `.env.local` and to the app's configuration in the platform's store.
     */
    async provision(options: ProvisionOptions): Promise<ProvisionResult> {
      const { tenantId, workflowKey } = options;
      const [storedWorkflow] = await find(tenantId, WORKFLOW_CONFIG_TYPE, { workflowKey });
      const before = (storedWorkflow?.data ?? {});
      const stages = planStages(options.stages, before['stages'] as Data[] | undefined, options.stageEnv, options.stagePrompts);
      const workflowEnvKey = options.workflowEnvKey ?? defaultWorkflowEnvKey(workflowKey);
      const env: Record<string, string> = { ...((before['env'] as Record<string, string> | undefined) ?? {}), [workflowEnvKey]: workflowKey };
      for (const stage of stages ?? []) if (typeof stage['envKey'] === 'string') env[stage['envKey']] = String(stage['id']);
      const profileKey = options.bindAiRuntime ? (options.aiProfileKey ?? (before['aiProfileKey'] as string | undefined) ?? workflowKey) : undefined;

      const results: ProvisionedResource[] = [];
      const workflowData = defined({
        ...before,
        workflowKey,
        displayName: options.displayName ?? before['displayName'],
        vertical: options.vertical,
        usecase: options.usecase,
        scopeKey: options.scopeKey ?? `${options.usecase}:${workflowKey}`,
        status: options.status,
        stages,
        env,
        aiProfileKey: profileKey ?? before['aiProfileKey'],
        label: options.label ?? before['label'],
      });
      results.push(await upsert(tenantId, WORKFLOW_CONFIG_TYPE, storedWorkflow, workflowData));

      const [storedProduct] = await find(tenantId, PRODUCT_CONFIG_TYPE, { vertical: options.vertical, workflowKey });
      const productBefore = (storedProduct?.data ?? {});
      results.push(
        await upsert(
          tenantId,
          PRODUCT_CONFIG_TYPE,
          storedProduct,
          defined({ ...productBefore, vertical: options.vertical, workflowKey, displayName: workflowData['displayName'], status: options.status }),
        ),
      );

      if (options.bindAiRuntime) {
        const [storedProfile] = await find(tenantId, AI_PROFILE_TYPE, { profileKey: profileKey! });
        const profileBefore = (storedProfile?.data ?? {});
        results.push(
          await upsert(
            tenantId,
            AI_PROFILE_TYPE,
            storedProfile,
            defined({ ...profileBefore, profileKey, provider: options.aiProvider ?? profileBefore['provider'] ?? DEFAULT_AI_PROVIDER, model: options.aiModel ?? profileBefore['model'] }),
          ),
        );
        const chatbots = await find(tenantId, CHATBOT_CONFIG_TYPE, { workflowKey });
        const storedChatbot = chatbots.find((c) => !c.data['stage']);
        const chatbotBefore = (storedChatbot?.data ?? {});
        results.push(await upsert(tenantId, CHATBOT_CONFIG_TYPE, storedChatbot, defined({ ...chatbotBefore, workflowKey, aiProfileKey: profileKey, status: options.status })));
      }

      const result: ProvisionResult = { tenantId, workflowKey, status: options.status, resources: results, env };
      if (options.writeLocalEnv) {
        const file = await envFilePath();
        result.localEnv = { file: relative(process.cwd(), file) || file, changes: await updateEnvFile(file, Object.entries(env).map(([key, value]) => ({ key, value }))) };
      }
      if (options.writeAppConfig) {
        result.appConfig = await createConfigStore(api).write(
          { tenantId, ...options.writeAppConfig },
          Object.entries(env).map(([key, value]) => ({ key, value })),
        );
      }
      return result;
    },

    async readiness(tenantId: string, workflowKeys: string[]): Promise<Readiness> {
      const query = { tenant_id: tenantId, workflow_keys: workflowKeys.length ? workflowKeys.join(',') : undefined };
      return (await api.request<Readiness>('GET', '/v4/integrations/builder/readiness', { query, subject: `Tenant ${tenantId}` })).body;
    },

    async status(tenantId: string, workflowKey: string): Promise<WorkflowStatus> {
      return (await api.request<WorkflowStatus>('GET', `/v4/workflows/runtime/${encodeURIComponent(workflowKey)}/status`, { query: { tenant_id: tenantId }, subject: `Tenant ${tenantId}` })).body;
    },

    async request(tenantId: string, input: { workflowKey: string; displayName?: string; reason?: string }): Promise<RuntimeRequest> {
      const body = defined({ tenant_id: tenantId, workflow_key: input.workflowKey, display_name: input.displayName, reason: input.reason });
      return (await api.request<RuntimeRequest>('POST', '/v4/workflows/runtime-requests', { body, subject: `Tenant ${tenantId}` })).body;
    },
  };
}
