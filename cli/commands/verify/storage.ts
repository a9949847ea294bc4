import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { EXIT_CODES } from '../../errors.ts';
import { renderReport } from './_render.ts';

export const command = withMeta(
  new Command('storage')
    .description("Check the tenant's storage: its status answers and the doctor finds nothing failing (read-only)")
    .addOption(tenantIdOption())
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createVerifyService } = await import('../../services/verify.service.ts');
      const ctx = contextOf(cmd);
      const tenantId = await ctx.tenantId(options.tenantId);
      const verify = createVerifyService(await ctx.api());
      const result = await ctx.out.spin('Verifying storage', () => verify.storage(tenantId));
      ctx.out.data(result, renderReport);
      if (result.summary.failed > 0) process.exitCode = EXIT_CODES.checksFailed;
    }),
  { calls: ['GET /v4/data/resources/{tenantId}/storage', 'GET /v4/data/resources/{tenantId}/storage/doctor'] },
);
