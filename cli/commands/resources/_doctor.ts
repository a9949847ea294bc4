import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { EXIT_CODES } from '../../errors.ts';
import { renderDoctor } from './_storage-render.ts';

/** `resources doctor` and `resources storage doctor`: the storage doctor's checks; a failed check exits non-zero. */
export function doctorCommand() {
  return withMeta(
    new Command('doctor')
      .description("Check the tenant's storage: isolation, roles, indexes, reachability (read-only)")
      .addOption(tenantIdOption())
      .addOption(formatOption())
      .addOption(jsonOption())
      .action(async (options, cmd) => {
        const { createStorageService } = await import('../../services/storage.service.ts');
        const ctx = contextOf(cmd);
        const tenantId = await ctx.tenantId(options.tenantId);
        const storage = createStorageService(await ctx.api());
        const report = await ctx.out.spin('Checking storage', () => storage.doctor(tenantId));
        ctx.out.data(report, renderDoctor);
        if (report.result === 'fail') process.exitCode = EXIT_CODES.checksFailed;
      }),
    { calls: ['GET /v4/data/resources/{tenantId}/storage/doctor'] },
  );
}
