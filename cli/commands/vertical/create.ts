import { Command } from '@commander-js/extra-typings';
import { formatOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { invalidInput } from '../../errors.ts';
import { DEFAULT_APP_SOURCE, DEFAULT_APP_STATUS } from '../../services/verticals.constants.ts';
import { renderApp } from './_render.ts';

export const command = withMeta(
  new Command('create')
    .description('Enroll an app in the company tenant (the --tenant-id, else the active tenant), with a child tenant of its own when --child-tenant is given; then svc vertical select <key> makes it the project\'s app')
    .argument('<name>', 'the app\'s display name')
    .addOption(tenantIdOption())
    .option('--parent-tenant <id>', 'create the child tenant under this tenant (id or slug, the company tenant or one below it; needs --child-tenant)')
    .option('--child-tenant <name>', 'create a child tenant of this name for the app')
    .option('--child-tenant-slug <slug>', "the child tenant's slug (default: the kebab-case of its name; needs --child-tenant)")
    .option('--key <key>', 'the app key (default: the kebab-case of the name)')
    .option('--template <templateKey>', 'the template the app was made from')
    .option('--source <source>', 'what enrolled the app', DEFAULT_APP_SOURCE)
    .option('--app-url <url>', "the app's address (http or https)")
    .option('--status <status>', 'lifecycle status (the platform knows pending, active, suspended, retired)', DEFAULT_APP_STATUS)
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (name, options, cmd) => {
      const { checkAppKey, createVerticalsService } = await import('../../services/verticals.service.ts');
      const ctx = contextOf(cmd);
      if (!options.childTenant && options.childTenantSlug !== undefined) throw invalidInput('--child-tenant-slug needs --child-tenant');
      if (!options.childTenant && options.parentTenant !== undefined) throw invalidInput('--parent-tenant needs --child-tenant');
      if (options.key !== undefined) checkAppKey(options.key);
      const tenantId = await ctx.tenantId(options.tenantId);
      const verticals = createVerticalsService(await ctx.api());
      const app = await ctx.out.spin(`Enrolling ${name}`, () =>
        verticals.create(tenantId, {
          name,
          ...(options.key !== undefined ? { key: options.key } : {}),
          ...(options.template !== undefined ? { template: options.template } : {}),
          source: options.source,
          ...(options.appUrl !== undefined ? { appUrl: options.appUrl } : {}),
          status: options.status,
          ...(options.childTenant ? { childTenant: { name: options.childTenant, ...(options.childTenantSlug ? { slug: options.childTenantSlug } : {}) } } : {}),
          ...(options.parentTenant ? { parentTenant: options.parentTenant } : {}),
        }),
      );
      ctx.out.success(`App ${app.key} enrolled${app.childTenantSlug ? ` with child tenant ${app.childTenantSlug}` : ''}; select it with svc vertical select ${app.key}`);
      ctx.out.data(app, renderApp);
    }),
  { calls: ['POST /v4/platform/tenants/{companyTenantId}/apps'] },
);
