import { Command } from '@commander-js/extra-typings';
import { tenantIdOption, withMeta } from '../command.ts';
import { contextOf } from '../context.ts';
import { createVerifyService } from '../services/verify.service.ts';

export const command = withMeta(
  new Command('verify')
    .description("Check the platform's health, the object types and the tenant's schema (read-only)")
    .addOption(tenantIdOption())
    .action(async (options, cmd) => {
      const ctx = contextOf(cmd);
      const verify = createVerifyService(await ctx.api());
      const result = await ctx.out.spin('Verifying', () => verify.run(() => ctx.tenantId(options.tenantId)));
      const { colors, simple } = ctx.out;
      for (const check of result.checks) {
        const mark = simple ? (check.ok ? 'ok' : 'FAILED') : check.ok ? colors.green('✓') : colors.red('✗');
        const detail = check.error ? `${check.error.code} ${check.detail}` : check.detail;
        ctx.out.text(`${mark} ${check.name}: ${detail}`);
      }
      const failed = result.checks.find((c) => c.error);
      if (failed?.error) {
        ctx.out.info(`${failed.error.code}: ${failed.error.suggestion}`);
        process.exitCode = failed.error.exitCode;
      }
    }),
  { calls: ['GET /health', 'GET /v4/data/resources/object-types', 'GET /v4/data/resources/schema/{tenantId}'], plainText: true },
);
