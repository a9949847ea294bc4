import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from '../_top-level.ts';
import { tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderCheck } from './_render.ts';
import { command as calls } from './calls.ts';
import { command as storage } from './storage.ts';

export const command = withMeta(
  new Command('verify')
    .description(TOP_LEVEL.verify.description)
    .addOption(tenantIdOption())
    // `verify storage --tenant-id x`: the option after a subcommand's name is the subcommand's.
    .enablePositionalOptions()
    .action(async (options, cmd) => {
      const { createVerifyService } = await import('../../services/verify.service.ts');
      const ctx = contextOf(cmd);
      const verify = createVerifyService(await ctx.api());
      const result = await ctx.out.spin('Verifying', () => verify.run(() => ctx.tenantId(options.tenantId)));
      for (const check of result.checks) ctx.out.text(renderCheck(check, ctx.out));
      const failed = result.checks.find((c) => c.error);
      if (failed?.error) {
        ctx.out.info(`${failed.error.code}: ${failed.error.suggestion}`);
        process.exitCode = failed.error.exitCode;
      }
    })
    .addCommand(storage)
    .addCommand(calls),
  { calls: ['GET /health', 'GET /v4/data/resources/object-types', 'GET /v4/data/resources/schema/{tenantId}'], plainText: true },
);
