import { Command, Option } from '@commander-js/extra-typings';
import { TOP_LEVEL } from './_top-level.ts';
import { relative } from 'node:path';
import { withMeta } from '../command.ts';
import { readTenantContext, resolveBaseUrl } from '../config.ts';
import { contextOf, type CommandContext } from '../context.ts';
import { CliError, invalidInput } from '../errors.ts';
import { fields, type TextRenderer } from '../output.ts';
import type { FileStep, PlatformBinding } from '../services/init.service.ts';
import type { Manifest } from '../services/project.service.ts';
import { BUILTIN_SOURCE, PACKAGE_PROFILES, type PackageProfile } from '../services/project.constants.ts';
import { showingProblems } from './_project.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface InitResult {
  name: string;
  key: string;
  directory: string;
  source: string;
  packageProfile: PackageProfile;
  agent: boolean;
  files: FileStep[];
  env: { path: string; added: string[] };
  git: string;
  dependencies: string;
  platform: PlatformBinding;
  manifest: Manifest;
}

const count = (files: FileStep[], action: FileStep['action']) => files.filter((f) => f.action === action).length;

const renderInit: TextRenderer<InitResult> = (r, style) => {
  const changed = (['create', 'update', 'conflict', 'merge', 'keep', 'unchanged'] as const)
    .map((action) => [action, count(r.files, action)] as const)
    .filter(([, n]) => n > 0)
    .map(([action, n]) => `${n} ${{ create: 'created', update: 'updated', conflict: 'replaced (yours saved as .bak)', merge: 'merged', keep: 'kept', unchanged: 'unchanged' }[action]}`)
    .join(', ');
  const p = r.platform;
  const app =
    p.status === 'skipped'
      ? `not enrolled: ${p.reason}`
      : `${p.status} ${p.app!.key} in tenant ${r.manifest.tenancy.companyTenant?.slug ?? p.app!.companyTenantId} (${p.app!.status})${p.app!.childTenantSlug ? `, child tenant ${p.app!.childTenantSlug}` : ''}`;
  const decisions = p.capabilities ? Object.entries(p.capabilities.decisions) : [];
  const refused = decisions.filter(([, d]) => !d.allowed).map(([key]) => key);
  const capabilities = p.capabilities
    ? `plan ${p.capabilities.plan}: ${decisions.length - refused.length} of ${decisions.length} allowed${refused.length ? `; not allowed: ${refused.join(', ')}` : ''}`
    : p.capabilitiesError
      ? `not evaluated: ${p.capabilitiesError}`
      : '-';
  const where = relative(process.cwd(), r.directory);
  const next = [...(where ? [`cd ${where}`] : []), ...(p.status === 'skipped' ? ['svc login', 'svc init --current-dir'] : []), 'svc provision idp', 'svc dev'];
  return [
    `${r.name} scaffolded in ${r.directory}`,
    fields(
      [
        ['source', r.source],
        ['files', changed || 'none'],
        ['profile', r.packageProfile],
        ['git', r.git],
        ['packages', r.dependencies],
        ['app', app],
        ['capabilities', capabilities],
      ],
      style,
    ),
    '',
    'Next:',
    ...next.map((line) => `  ${line}`),
  ].join('\n');
};

/** The company tenant: the option, else the project's, else the active tenant, else one picked at the prompt. */
async function companyTenantOf(ctx: CommandContext, given: string | undefined, previous: Manifest | undefined, ask: boolean): Promise<{ id: string; slug: string | null } | undefined> {
  if (given) return { id: given, slug: UUID.test(given) ? null : given };
  if (previous?.tenancy.companyTenant) return previous.tenancy.companyTenant;
  const selected = process.env['SVC_TENANT_ID'] ? { tenantId: process.env['SVC_TENANT_ID'], tenantSlug: undefined } : await readTenantContext(ctx.profile);
  if (selected) return { id: selected.tenantId, slug: selected.tenantSlug ?? (UUID.test(selected.tenantId) ? null : selected.tenantId) };
  if (!ask) return undefined;
  try {
    const { createTenantsService } = await import('../services/tenants.service.ts');
    const tenants = (await createTenantsService(await ctx.api()).list({ all: false })).data;
    if (!tenants.length) return undefined;
    const id = await ctx.out.select('Company tenant of the app', tenants.map((t) => ({ value: t.id, label: t.slug, hint: t.name })), '--company-tenant');
    return { id, slug: tenants.find((t) => t.id === id)?.slug ?? null };
  } catch (error) {
    if (error instanceof CliError && ['E101', 'E102', 'E002'].includes(error.code)) return undefined;
    throw error;
  }
}

/** Whether the client has a token to call the platform with (no call is made). */
async function loggedIn(ctx: CommandContext): Promise<boolean> {
  const { checkLogin } = await import('../services/dev.service.ts');
  return checkLogin(ctx.profile).then(() => true, () => false);
}

async function askName(ctx: CommandContext, initial: string): Promise<string> {
  const prompts = await import('@clack/prompts');
  const answer = await prompts.text({ message: 'App name', placeholder: initial, defaultValue: initial, output: process.stderr });
  if (prompts.isCancel(answer)) throw invalidInput('cancelled at the prompt');
  return String(answer).trim() || initial;
}

export const command = withMeta(
  new Command('init')
    .description(TOP_LEVEL.init.description)
    .argument('[name]', 'app name: the folder to create and, in kebab-case, the app key (letters, digits, spaces, ".", "_", "-")')
    .option(
      '--from <source>',
      'scaffold from a git URL (https://, ssh://, file://, user@host:path; "#ref" picks a branch or tag) or a local folder (default: the app template that ships with the client; run again in a project scaffolded from another source, only --from updates its files)',
    )
    .option('--skip-prompts', 'never ask: the active tenant is the company tenant, the package profile is the default')
    .option('--current-dir', 'scaffold into the current folder: other files and git metadata stay, scaffold files are added or updated (a changed one is saved as <file>.bak first), package.json and .gitignore get what they lack')
    .option('--company-tenant <id>', 'company tenant (id or slug) to enroll the app in (default: the project\'s, else the active tenant)')
    .addOption(new Option('--tenant <id>', 'deprecated: use --company-tenant'))
    .option('--parent-tenant <id>', 'tenant under which the child tenant is created: the company tenant (default) or one below it; needs a child tenant')
    .option('--child-tenant <name>', 'create a child tenant of this name for the app (its slug is the kebab-case of the name)')
    .option('--create-child-tenant', 'create a child tenant named after the app')
    .option('--no-agent', 'leave out the agent assets (run again in a project: what the project has is kept unless given)')
    .addOption(new Option('--package-profile <profile>', 'package profile recorded in the manifest: which blocks the app may use').choices(PACKAGE_PROFILES).default('external'))
    .action(async (nameArgument, options, cmd) => {
      const { bindApp, initGit, installDependencies, nextManifest, resolveTarget, stageFiles, writeEnvFile, writeScaffold } = await import('../services/init.service.ts');
      const { writeManifest } = await import('../services/project.service.ts');
      const { agentFiles } = await import('../services/template.service.ts');
      const ctx = contextOf(cmd);
      if (options.tenant !== undefined) ctx.out.warn('--tenant is deprecated; use --company-tenant');
      if (options.tenant !== undefined && options.companyTenant !== undefined && options.tenant !== options.companyTenant) {
        throw invalidInput('--tenant and --company-tenant name different tenants; give --company-tenant alone');
      }
      const childTenant = options.childTenant ?? undefined;
      if (options.parentTenant !== undefined && childTenant === undefined && !options.createChildTenant) {
        throw invalidInput('--parent-tenant places a child tenant: give --child-tenant <name> or --create-child-tenant with it');
      }
      const ask = ctx.out.interactive && !options.skipPrompts;
      const currentDir = options.currentDir === true;
      let name = nameArgument;
      if (name === undefined && !currentDir) {
        if (!ask) throw new CliError('E303', { field: '[name]' });
        name = await askName(ctx, 'my-app');
      }
      const target = await resolveTarget({ name, currentDir, cwd: process.cwd() });
      const profileGiven = cmd.getOptionValueSource('packageProfile') !== 'default';
      let packageProfile = profileGiven ? (options.packageProfile) : undefined;
      if (!packageProfile && ask && !target.previous) {
        packageProfile = await ctx.out.select<PackageProfile>(
          'Package profile',
          [
            { value: 'external', label: 'external', hint: 'blocks safe outside the platform operator (default)' },
            { value: 'internal', label: 'internal', hint: 'also internal-only blocks' },
            { value: 'hybrid', label: 'hybrid', hint: 'both, with adapters' },
          ],
          '--package-profile',
        );
      }
      // Run again in a project, what is not given stays as the project has it.
      const agent = cmd.getOptionValueSource('agent') === 'default' && target.previous ? target.previous.template.agent : options.agent !== false;
      const otherSource = options.from === undefined && target.previous && target.previous.template.source !== BUILTIN_SOURCE ? target.previous.template.source : undefined;

      // A project scaffolded from another source is not filled with the built-in template's files: --from names the source to update from.
      const staged = otherSource
        ? { source: otherSource, files: agent ? await agentFiles() : [] }
        : await showingProblems(ctx, () =>
            ctx.out.spin(options.from ? `Fetching ${options.from}` : 'Rendering the template', () =>
              stageFiles({ from: options.from, agent, vars: { appName: target.name, appKey: target.key }, directory: target.directory }),
            ),
          );

      const company = await companyTenantOf(ctx, options.companyTenant ?? options.tenant, target.previous, ask);
      const child = childTenant ?? (options.createChildTenant ? target.name : undefined);
      const binding: PlatformBinding = company
        ? await ctx.out.spin(`Enrolling ${target.key}`, () =>
            bindApp(ctx.api, { companyTenant: company.id, name: target.name, key: target.key, childTenant: child, parentTenant: options.parentTenant }),
          )
        : { status: 'skipped', reason: (await loggedIn(ctx)) ? 'no company tenant: pass --company-tenant, or run svc tenant select' : 'not logged in' };
      if (binding.status === 'bound' && child && binding.app?.childTenantSlug === null) ctx.out.warn(`${target.key} exists without a child tenant; no child tenant was made`);

      const written = await writeScaffold(target.directory, staged.files, target.previous?.template.files ?? {});
      const baseUrl = await resolveBaseUrl(ctx.profile).catch(() => undefined);
      const env = await writeEnvFile(target.directory, { baseUrl, appKey: target.key });
      const manifest = nextManifest(target.previous, {
        name: target.name,
        key: target.key,
        source: staged.source,
        agent,
        packageProfile,
        companyTenant: company,
        parentTenant: options.parentTenant,
        childTenant: child,
        binding,
        hashes: written.hashes,
      });
      await writeManifest(target.directory, manifest);

      // Installed first, so that the first commit holds the lock file.
      const dependencies = await ctx.out.spin('Installing dependencies', () => installDependencies(target.directory));
      if (dependencies.note) ctx.out.warn(dependencies.note);
      const git = await ctx.out.spin('Initialising git', () => initGit(target.directory, target.name));
      if (git.note) ctx.out.warn(git.note);
      if (binding.capabilities?.decisions['identity.apps']?.allowed === false) {
        ctx.out.warn(`the tenant may not register apps with the identity provider (identity.apps: ${binding.capabilities.decisions['identity.apps'].reason}): users cannot sign in to the app`);
      }

      const result: InitResult = {
        name: target.name,
        key: target.key,
        directory: target.directory,
        source: staged.source,
        packageProfile: manifest.packageProfile,
        agent,
        files: written.steps,
        env,
        git: git.status,
        dependencies: dependencies.status,
        platform: binding,
        manifest,
      };
      ctx.out.data(result, renderInit);
    }),
  {
    calls: [
      'POST /v4/platform/tenants/{companyTenantId}/apps',
      'GET /v4/data/resources/{tenantId}/tenant-vertical-enrollment',
      'GET /v4/identity/tenants',
      'POST /v4/platform/capabilities/evaluate',
    ],
    plainText: true,
  },
);
