import { Command, Option } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { invalidInput } from '../../errors.ts';
import { AI_PROFILE_TYPE, CHATBOT_CONFIG_TYPE, DEFAULT_AI_PROVIDER, PRODUCT_CONFIG_TYPE, WORKFLOW_CONFIG_TYPE, WORKFLOW_STATUSES } from '../../services/workflows.constants.ts';
import { renderProvision } from './_render.ts';

const collect = (value: string, previous: string[]) => [...previous, value];
const WORKFLOW_KEY = /^[a-z0-9]+([-_:][a-z0-9]+)*$/;
const USECASE = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const upsertCalls = (type: string) => [`GET /v4/data/resources/{tenantId}/${type}`, `POST /v4/data/resources/{tenantId}/${type}`, `PUT /v4/data/resources/{tenantId}/${type}/{id}`];

export const command = withMeta(
  new Command('provision')
    .description(
      "Create or update a workflow's configuration so that chat can use it: shared-workflow-config (by workflow key) and vertical-product-config (by vertical and workflow key), " +
        'with --bind-ai-runtime also shared-ai-profile (by profile key) and the workflow\'s shared-chatbot-config; each is listed, then created, updated or left unchanged. ' +
        "Fields the options do not set keep their stored values (a workflow's stages, prompts and env keys included). " +
        'The workflow records env values: its key under --workflow-env-key, each stage id under its --stage-env key; --write-local-env writes them to .env.local, --write-app-config to the configuration store.',
    )
    .argument('<workflow-key>', 'the workflow key: lower-case letters and digits with -, _ or : (such as support-intake)')
    .requiredOption('--vertical <key>', 'the vertical (app key) the workflow belongs to')
    .option('--tenant <id>', 'tenant id or slug (default: the active tenant)')
    .option('--display-name <name>', "the workflow's display name")
    .option('--usecase <usecase>', 'what the workflow is for (kebab-case)', 'generic')
    .option('--scope-key <key>', 'scope key (default: <usecase>:<workflow-key>)')
    .option('--stage <id[:Display Name]>', 'a stage, in order (repeatable; replaces the stored stages; none: the stored ones, else the single stage chat)', collect, [] as string[])
    .option('--stage-env <KEY=stage-id>', 'the env key holding a stage id (repeatable)', collect, [] as string[])
    .option('--stage-prompt <stage=prompt>', "a stage's prompt (repeatable)", collect, [] as string[])
    .option('--workflow-env-key <key>', 'the env key holding the workflow key (default: SVC_WORKFLOW_<WORKFLOW_KEY>)')
    .option('--bind-ai-runtime', 'bind an AI runtime: an AI profile and the workflow\'s chatbot configuration')
    .option('--ai-provider <integrationKey>', `the AI profile's provider, with --bind-ai-runtime (default: ${DEFAULT_AI_PROVIDER}, the platform's own answerer; another needs the platform's OpenAI-compatible endpoint)`)
    .option('--ai-model <model>', "the AI profile's model, with --bind-ai-runtime")
    .option('--ai-profile-key <key>', "the AI profile's key, with --bind-ai-runtime (default: the workflow's, else the workflow key)")
    .addOption(new Option('--status <status>', 'the status of the workflow, its product configuration and its chatbot configuration').choices(WORKFLOW_STATUSES).default('active'))
    .option('--write-local-env', "write the workflow's env values to .env.local")
    .option('--write-app-config', "write the workflow's env values to the app's configuration in the platform's store (tenant administrators)")
    .option('--env <environment>', 'the environment --write-app-config writes', 'dev')
    .option('--label <label>', "the app's label, recorded on the workflow and used by --write-app-config (default there: the project's app name)")
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (workflowKey, options, cmd) => {
      const { resolveLabel } = await import('../../services/env-file.ts');
      const { checkEnvKey, createWorkflowsService, parseStage, parseStageEnv, parseStagePrompt } = await import('../../services/workflows.service.ts');
      const ctx = contextOf(cmd);
      if (!WORKFLOW_KEY.test(workflowKey) || workflowKey.length > 100) {
        throw invalidInput(`workflow key "${workflowKey}": lower-case letters and digits with -, _ or : between them, at most 100 characters`);
      }
      if (!USECASE.test(options.usecase)) throw invalidInput(`--usecase ${options.usecase}: must be kebab-case, such as generic`);
      const runtimeOptions = (['aiProvider', 'aiModel', 'aiProfileKey'] as const).filter((o) => options[o] !== undefined);
      if (runtimeOptions.length && !options.bindAiRuntime) {
        throw invalidInput(`${runtimeOptions.map((o) => '--' + o.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())).join(', ')} configure the AI runtime: add --bind-ai-runtime`);
      }
      const stages = options.stage.map(parseStage);
      const stageEnv = options.stageEnv.map(parseStageEnv);
      const stagePrompts = options.stagePrompt.map(parseStagePrompt);
      const workflowEnvKey = options.workflowEnvKey === undefined ? undefined : checkEnvKey(options.workflowEnvKey, '--workflow-env-key');
      const label = options.writeAppConfig ? await resolveLabel(options.label) : options.label;
      const tenantId = await ctx.tenantId(options.tenant);
      const workflows = createWorkflowsService(await ctx.api());
      const result = await ctx.out.spin(`Provisioning workflow ${workflowKey}`, () =>
        workflows.provision({
          tenantId,
          workflowKey,
          vertical: options.vertical,
          displayName: options.displayName,
          usecase: options.usecase,
          scopeKey: options.scopeKey,
          stages,
          stageEnv,
          stagePrompts,
          workflowEnvKey,
          bindAiRuntime: options.bindAiRuntime === true,
          aiProvider: options.aiProvider,
          aiModel: options.aiModel,
          aiProfileKey: options.aiProfileKey,
          status: options.status,
          label,
          writeLocalEnv: options.writeLocalEnv === true,
          writeAppConfig: options.writeAppConfig ? { label: label!, environment: options.env } : undefined,
        }),
      );
      ctx.out.data(result, renderProvision);
    }),
  {
    calls: [
      ...upsertCalls(WORKFLOW_CONFIG_TYPE),
      ...upsertCalls(PRODUCT_CONFIG_TYPE),
      ...upsertCalls(AI_PROFILE_TYPE),
      ...upsertCalls(CHATBOT_CONFIG_TYPE),
      'PATCH /v4/platform/config/{tenantId}/{label}/{environment}',
    ],
  },
);
