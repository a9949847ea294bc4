import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderReadiness } from './_render.ts';

export const command = withMeta(
  new Command('readiness')
    .description(
      "A builder's readiness report of the tenant: its status and plan, every capability's decision, and the runtime status of the workflows named (default: every configured one). " +
        'Ready when the tenant is active and every workflow is available; the exit code is 0 either way (read `ready`).',
    )
    .argument('[workflow-keys...]', 'workflow keys (default: every workflow the tenant configured)')
    .option('--tenant <id>', 'tenant id or slug (default: the active tenant)')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (workflowKeys, options, cmd) => {
      const { createWorkflowsService } = await import('../../services/workflows.service.ts');
      const ctx = contextOf(cmd);
      const tenantId = await ctx.tenantId(options.tenant);
      const workflows = createWorkflowsService(await ctx.api());
      const readiness = await ctx.out.spin('Checking readiness', () => workflows.readiness(tenantId, workflowKeys));
      ctx.out.data(readiness, renderReadiness);
    }),
  { calls: ['GET /v4/integrations/builder/readiness'] },
);
