import { Command, Option } from '@commander-js/extra-typings';
import { csv, formatOption, jsonOption, withMeta } from '../../command.ts';
import { readTenantContext, writeTenantContext } from '../../config.ts';
import { contextOf } from '../../context.ts';
import { invalidInput } from '../../errors.ts';
import type { TenantFields } from '../../services/tenants.service.ts';
import { renderTenant } from './_render.ts';

const USECASES = ['council', 'retail', 'healthcare', 'finance', 'manufacturing', 'generic'] as const;
const HOME_REGIONS = ['au', 'ca', 'eu'] as const;
const KEBAB_CASE = /^[a-z0-9]+(-[a-z0-9]+)*$/;

export const command = withMeta(
  new Command('create')
    .description('Create a tenant (a child of --parent or the active tenant; a root one with --allow-root), wait until it is usable, and select it')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--slug <slug>', 'kebab-case slug, unique on the platform')
    .option('--parent <id>', 'parent tenant id or slug (default: the active tenant)')
    .option('--domain <domains>', 'comma-separated domain names')
    .addOption(new Option('--usecase <usecase>', 'what the tenant is for').choices(USECASES).default('generic'))
    .option('--industry <industry>', 'industry, free text')
    .option('--starter-template <key>', 'starter template key', 'blank-vertical-template')
    .addOption(new Option('--home-region <region>', "home region (a child's default: its parent's; a root tenant needs it)").choices(HOME_REGIONS))
    .option('--allow-root', 'create a root tenant (platform administrators only)')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { createTenantsService } = await import('../../services/tenants.service.ts');
      const ctx = contextOf(cmd);
      if (!KEBAB_CASE.test(options.slug)) throw invalidInput(`--slug must be kebab-case (lowercase letters and digits joined by single hyphens), not "${options.slug}"`);
      const fields: TenantFields = {
        name: options.name,
        slug: options.slug,
        domains: csv(options.domain) ?? [],
        usecase: options.usecase,
        ...(options.industry ? { industry: options.industry } : {}),
        starter_template: options.starterTemplate,
      };
      const tenants = createTenantsService(await ctx.api());
      const parentRef = options.parent ?? (options.allowRoot ? undefined : (await readTenantContext(ctx.profile))?.tenantId);
      let created;
      if (parentRef === undefined) {
        if (!options.allowRoot) throw invalidInput('no parent: pass --parent <id>, select a tenant (tenant select), or pass --allow-root for a root tenant');
        const homeRegion = options.homeRegion;
        if (!homeRegion) throw invalidInput('a root tenant needs --home-region (au, ca or eu)');
        created = await ctx.out.spin(`Creating root tenant ${options.slug}`, () => tenants.createRoot({ ...fields, home_region: homeRegion }));
      } else {
        const parent = await tenants.find(parentRef);
        // A child lives where its parent does unless told otherwise.
        const homeRegion = options.homeRegion ?? parent.homeRegion ?? undefined;
        created = await ctx.out.spin(`Creating ${options.slug} under ${parent.slug}`, () => tenants.createChild(parent.id, { ...fields, ...(homeRegion ? { home_region: homeRegion } : {}) }));
      }
      const usable = await ctx.out.spin(`Provisioning ${created.slug}`, () => tenants.waitUntilUsable(created.id), { elapsed: true });
      await writeTenantContext(ctx.profile, { tenantId: usable.id, tenantSlug: usable.slug });
      ctx.out.success(`Created ${usable.name} (${usable.slug}); it is now the active tenant`);
      ctx.out.data(usable, renderTenant);
    }),
  {
    calls: [
      'POST /v4/platform/tenants/{parentId}/children',
      'POST /v4/platform/tenants/{parentId}/children/{childId}/bootstrap-admin',
      'POST /v4/platform/tenants',
      'GET /v4/identity/tenants',
    ],
  },
);
