import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { RUNTIME_STATUSES } from '../../services/workflows.constants.ts';
import { renderStatus } from './_render.ts';

export const command = withMeta(
  new Command('status')
    .description(`Whether a workflow can run now, and why: ${RUNTIME_STATUSES.join(', ')}`)
    .argument('<workflow-key>', 'the workflow key')
    .option('--tenant <id>', 'tenant id or slug (default: the active tenant)')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (workflowKey, options, cmd) => {
      const { createWorkflowsService } = await import('../../services/workflows.service.ts');
      const ctx = contextOf(cmd);
      const tenantId = await ctx.tenantId(options.tenant);
      const workflows = createWorkflowsService(await ctx.api());
      const status = await ctx.out.spin(`Reading the status of ${workflowKey}`, () => workflows.status(tenantId, workflowKey));
      ctx.out.data(status, renderStatus);
    }),
  { calls: ['GET /v4/workflows/runtime/{workflowKey}/status'] },
);
