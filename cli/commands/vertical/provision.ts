import { Command, Option } from '@commander-js/extra-typings';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { VERTICAL_KEY_ENV } from '../../services/env.constants.ts';
import { PROVISION_BACKENDS } from '../../services/storage.constants.ts';
import { renderChanges } from '../resources/_storage-render.ts';

export const command = withMeta(
  new Command('provision')
    .description(
      `Provision an app's storage (idempotent): its child tenant's when its enrollment names one, else the company tenant's; --skip-validate does not read the enrollment and provisions the company tenant; --select also sets ${VERTICAL_KEY_ENV} in .env.local (not with --dry-run, which changes nothing)`,
    )
    .argument('<key>', 'the app key')
    .addOption(tenantIdOption())
    .addOption(new Option('--backend <backend>', 'which backend').choices(PROVISION_BACKENDS).default('all'))
    .option('--dry-run', 'list the changes, make none')
    .option('--rebuild-search', 'rebuild the search projection from the stored resources')
    .option('--skip-validate', 'do not read the enrollment (no check that the app exists)')
    .option('--select', `also set ${VERTICAL_KEY_ENV} in .env.local`)
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (key, options, cmd) => {
      const { writeProjectEnv } = await import('../../services/env-file.ts');
      const { checkAppKey, createVerticalsService } = await import('../../services/verticals.service.ts');
      const ctx = contextOf(cmd);
      checkAppKey(key);
      const tenantId = await ctx.tenantId(options.tenantId);
      const verticals = createVerticalsService(await ctx.api());
      const app = options.skipValidate ? undefined : await ctx.out.spin(`Reading app ${key}`, () => verticals.find(tenantId, key));
      const input = { backend: options.backend, dryRun: options.dryRun === true, rebuildSearch: options.rebuildSearch === true };
      const provisioned = await ctx.out.spin(`Provisioning the storage of ${key}`, () => verticals.provision(tenantId, app, input));
      let envFile: string | undefined;
      if (options.select && !input.dryRun) {
        envFile = await writeProjectEnv({ [VERTICAL_KEY_ENV]: key });
        ctx.out.success(`${VERTICAL_KEY_ENV}=${key} written to ${envFile}`);
      } else if (options.select) ctx.out.info(`dry run: ${VERTICAL_KEY_ENV} not written`);
      const result = { key, tenantId: provisioned.tenantId, validated: app !== undefined, provision: provisioned.storage, ...(envFile ? { envFile } : {}) };
      ctx.out.data(result, (r, style) => {
        const state = r.provision['state'] ? `\nstate: ${String(r.provision['state'])}` : '';
        return `${style.colors.dim(`app ${r.key}, tenant ${r.tenantId}`)}\n${renderChanges(r.provision, style)}${state}`;
      });
    }),
  { calls: ['GET /v4/data/resources/{tenantId}/tenant-vertical-enrollment', 'POST /v4/data/resources/{tenantId}/storage/provision'] },
);
