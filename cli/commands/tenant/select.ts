import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, withMeta } from '../../command.ts';
import { writeTenantContext } from '../../config.ts';
import { contextOf } from '../../context.ts';
import { renderTenant } from './_render.ts';

export const command = withMeta(
  new Command('select')
    .description('Choose the active tenant of the profile (asks when none is given)')
    .argument('[tenant]', 'tenant id or slug')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (tenant, options, cmd) => {
      const { createTenantsService } = await import('../../services/tenants.service.ts');
      const ctx = contextOf(cmd);
      const tenants = createTenantsService(await ctx.api());
      let chosen = tenant;
      if (chosen === undefined) {
        const all = await ctx.out.spin('Reading tenants', () => tenants.all());
        chosen = await ctx.out.select(
          'Which tenant?',
          all.map((t) => ({ value: t.id, label: `${t.name} (${t.slug})`, hint: t.roles.join(', ') })),
          '[tenant]',
        );
      }
      const found = await tenants.find(chosen);
      await writeTenantContext(ctx.profile, { tenantId: found.id, tenantSlug: found.slug });
      ctx.out.success(`Active tenant: ${found.name} (${found.slug})`);
      ctx.out.data(found, renderTenant);
    }),
  { calls: ['GET /v4/identity/tenants'] },
);
