import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from './_top-level.ts';
import { wholeNumber, withMeta } from '../command.ts';
import { resolveBaseUrl, writeTenantContext } from '../config.ts';
import { contextOf } from '../context.ts';
import { CliError, invalidInput } from '../errors.ts';

export const command = withMeta(
  new Command('login')
    .description(TOP_LEVEL.login.description)
    .option('--tenant-name <name>', 'select this tenant (name or slug) after logging in')
    .option('--tenant-id <id>', 'select this tenant (id or slug) after logging in')
    .option('--scope <scopes>', 'space-separated scopes to ask for (default "openid email profile offline_access api")')
    .option('--callback-port <port>', 'port of the localhost callback server (default: any free port)', wholeNumber('--callback-port'))
    .option('--device', 'use a code entered on another device (the default over SSH or without a display)')
    .option('--browser', 'use the browser on this machine even over SSH or without a display')
    .action(async (options, cmd) => {
      const { browserAvailable, loginWithBrowser, loginWithDevice, openBrowser } = await import('../services/login.service.ts');
      const { createTenantsService } = await import('../services/tenants.service.ts');
      const ctx = contextOf(cmd);
      const baseUrl = await resolveBaseUrl(ctx.profile);
      if (!baseUrl) throw new CliError('E002', { var: 'BASE_URL_PUBLIC_API' });
      if (options.device && options.browser) throw invalidInput('give --device or --browser, not both');
      const device = options.device || (!options.browser && !browserAvailable());
      const result = device
        ? await loginWithDevice({
            baseUrl,
            profile: ctx.profile,
            scope: options.scope,
            onUserCode: (code) =>
              ctx.out.info(
                `No browser here: open ${code.verificationUri} on any device and enter the code ${code.userCode}` +
                  `${code.verificationUriComplete ? `\n(or open ${code.verificationUriComplete})` : ''}; it expires in ${Math.round(code.expiresIn / 60)} minutes.`,
              ),
          })
        : await loginWithBrowser({
            baseUrl,
            profile: ctx.profile,
            scope: options.scope,
            callbackPort: options.callbackPort,
            onAuthorizationUrl: (url) => {
              ctx.out.info(`Open this address to log in:\n${url}`);
              if (ctx.out.interactive && !process.env['SVC_NO_BROWSER']) openBrowser(url);
            },
          });
      ctx.out.success(`Logged in at ${result.issuer}${result.expiresAt ? `; the token expires at ${new Date(result.expiresAt * 1000).toISOString()}` : ''}.`);
      const wanted = options.tenantId ?? options.tenantName;
      if (wanted) {
        const tenants = createTenantsService(await ctx.api());
        const all = await tenants.all();
        const found = all.find((t) => t.id === wanted || t.slug === wanted || t.name === wanted);
        if (!found) throw new CliError('E202', { resource: `Tenant ${wanted}` });
        await writeTenantContext(ctx.profile, { tenantId: found.id, tenantSlug: found.slug });
        ctx.out.success(`Active tenant: ${found.name} (${found.slug})`);
      }
    }),
  {
    calls: ['GET /.well-known/openid-configuration', 'POST {auth_url}/oauth2/v2.0/devicecode', 'POST {auth_url}/oauth2/v2.0/token', 'GET /v4/identity/tenants'],
    plainText: true,
  },
);
