import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderRequest } from './_render.ts';

export const command = withMeta(
  new Command('request')
    .description("Ask an operator to bind a workflow's runtime; a request still pending for the workflow is answered as it is")
    .argument('<workflow-key>', 'the workflow key')
    .option('--tenant <id>', 'tenant id or slug (default: the active tenant)')
    .option('--display-name <name>', "the workflow's name for the operator (default: its display name, else its key)")
    .option('--reason <text>', 'why the workflow is needed')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (workflowKey, options, cmd) => {
      const { createWorkflowsService } = await import('../../services/workflows.service.ts');
      const ctx = contextOf(cmd);
      const tenantId = await ctx.tenantId(options.tenant);
      const workflows = createWorkflowsService(await ctx.api());
      const request = await ctx.out.spin(`Requesting a runtime for ${workflowKey}`, () =>
        workflows.request(tenantId, { workflowKey, displayName: options.displayName, reason: options.reason }),
      );
      ctx.out.success(`Request ${request.id} for ${request.workflowKey} is ${request.state}`);
      ctx.out.data(request, renderRequest);
    }),
  { calls: ['POST /v4/workflows/runtime-requests'] },
);
