import { Command } from '@commander-js/extra-typings';
import { collect, csv, formatOption, jsonOption, tenantIdOption, withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { IDP_ENV, VERTICAL_KEY_ENV } from '../../services/env.constants.ts';
import { CliError, invalidInput } from '../../errors.ts';
import { APP_SCOPES, type AppScope } from '../../services/idp-apps.constants.ts';
import { renderRecord } from '../../output.ts';
import type { IdpApp } from '../../services/idp-apps.service.ts';

/** The redirect URI of the app's dev server when none is given (`svc dev` serves on port 3000). */
export const DEFAULT_REDIRECT_URI = 'http://localhost:3000/auth/callback';

/** What the command did, without the secret: that goes to .env.local only. */
type IdpOutcome = {
  appKey: string;
  clientId: string;
  issuer: string | null;
  /** The platform was asked (no: the client id in .env.local was taken as it is). */
  checked: boolean;
  /** The permissions the app's tokens may use, as the platform answered (when it was asked); null: their user's. */
  scopes?: string[] | null;
  created: boolean;
  rotated: boolean;
  previousSecretExpiresAt?: string | null;
  envFile: string | null;
  /** The variables written to .env.local. */
  written: string[];
};

/** `--scopes a,b`: each a permission the route knows; an unknown one or none at all is E305 before any call. */
function appScopes(value: string | undefined): AppScope[] | undefined {
  const names = csv(value);
  if (names === undefined) return undefined;
  if (!names.length) throw invalidInput('--scopes names no permission');
  const unknown = names.filter((name) => !(APP_SCOPES as readonly string[]).includes(name));
  if (unknown.length) throw invalidInput(`--scopes: unknown permission ${unknown.join(', ')}; the permissions are ${APP_SCOPES.join(', ')}`);
  return [...new Set(names)] as AppScope[];
}

export const command = withMeta(
  new Command('idp')
    .description(
      `Register the project's app (${VERTICAL_KEY_ENV}) as an OAuth client of the platform's identity provider, or confirm its registration, and write ${IDP_ENV.clientId}, ${IDP_ENV.clientSecret} and ${IDP_ENV.issuer} to .env.local (other lines kept). Makes no call when .env.local already has a client id, unless --force, --rotate-secret or --scopes. The secret is shown by the platform only when the client is created or its secret rotated, and is written to .env.local, never printed`,
    )
    .addOption(tenantIdOption())
    .option('--display-name <name>', 'the name users see when they sign in (default: the app key)')
    .option('--redirect-uri <uri>', `where the provider sends users back after signing in (repeatable; default ${DEFAULT_REDIRECT_URI})`, collect, [] as string[])
    .option('--scopes <permissions>', `the tenant permissions the app's tokens may use, within their user's (comma-separated: ${APP_SCOPES.join(', ')}); asks the platform even when .env.local has a client id. Omitted, a new app's tokens have their user's permissions and an existing app's stay as they are`)
    .option('--force', 'ask the platform even when .env.local already has a client id (creates the client if it is gone, brings its name and redirect URIs to these)')
    .option('--rotate-secret', `get a new client secret and write it to .env.local (${IDP_ENV.clientSecret}); the old one keeps working for an hour`)
    .option('--debug', 'print each API call on stderr')
    .addOption(formatOption())
    .addOption(jsonOption())
    .action(async (options, cmd) => {
      const { envFilePath, readableByOthers, readEnvValues, writeProjectEnv } = await import('../../services/env-file.ts');
      const { createIdpAppsService } = await import('../../services/idp-apps.service.ts');
      const { checkAppKey } = await import('../../services/verticals.service.ts');
      const ctx = contextOf(cmd);
      const scopes = appScopes(options.scopes);
      const local = (await readEnvValues(await envFilePath())) ?? {};
      const appKey = process.env[VERTICAL_KEY_ENV] || local[VERTICAL_KEY_ENV];
      if (!appKey) throw new CliError('E002', { var: VERTICAL_KEY_ENV });
      checkAppKey(appKey);
      const localClientId = local[IDP_ENV.clientId] || undefined;
      const outcome: IdpOutcome = { appKey, clientId: localClientId ?? '', issuer: local[IDP_ENV.issuer] || null, checked: false, created: false, rotated: false, envFile: null, written: [] };
      const values: Record<string, string> = {};

      if (localClientId && !options.force && !options.rotateSecret && !scopes) {
        ctx.out.info(`.env.local already has ${IDP_ENV.clientId}=${localClientId}; no call made (--force checks it at the platform)`);
        ctx.out.data(outcome, renderRecord);
        return;
      }
      const idpApps = createIdpAppsService(await ctx.api());
      let app: IdpApp | undefined;
      if (!localClientId || options.force || scopes) {
        const tenantId = await ctx.tenantId(options.tenantId);
        const redirectUris = options.redirectUri.length ? options.redirectUri : [DEFAULT_REDIRECT_URI];
        const ensured = await ctx.out.spin(`Registering ${appKey} with the identity provider`, () =>
          idpApps.ensure({ tenantId, appKey, displayName: options.displayName ?? appKey, redirectUris, ...(scopes ? { scopes } : {}) }),
        );
        app = ensured.app;
        Object.assign(outcome, { clientId: app.clientId, issuer: app.issuer, checked: true, scopes: app.scopes, created: ensured.created });
        if (app.clientId !== localClientId) values[IDP_ENV.clientId] = app.clientId;
        if (app.issuer !== local[IDP_ENV.issuer]) values[IDP_ENV.issuer] = app.issuer;
        if (app.clientSecret) values[IDP_ENV.clientSecret] = app.clientSecret;
        const secretKnown = app.clientSecret !== undefined || (app.clientId === localClientId && !!local[IDP_ENV.clientSecret]);
        // A secret of another client would be refused: it goes, rather than stay beside the new id.
        if (!secretKnown && app.clientId !== localClientId && local[IDP_ENV.clientSecret]) values[IDP_ENV.clientSecret] = '';
        if (!secretKnown && !options.rotateSecret && app.tokenEndpointAuthMethod !== 'none') {
          ctx.out.warn(`the platform shows a client's secret only when it is made: .env.local has none for ${app.clientId}; get a new one with svc provision idp --rotate-secret`);
        }
      }
      // A client made just now comes with a new secret: there is nothing older to replace.
      if (options.rotateSecret && !outcome.created) {
        const clientId = app?.clientId ?? localClientId!;
        const rotated = await ctx.out.spin('Rotating the client secret', () => idpApps.rotateSecret(clientId));
        Object.assign(outcome, { clientId: rotated.clientId, issuer: rotated.issuer, rotated: true, previousSecretExpiresAt: rotated.previousSecretExpiresAt });
        values[IDP_ENV.clientSecret] = rotated.clientSecret;
        if (rotated.clientId !== localClientId) values[IDP_ENV.clientId] = rotated.clientId;
        if (rotated.issuer !== local[IDP_ENV.issuer]) values[IDP_ENV.issuer] = rotated.issuer;
      }
      if (Object.keys(values).length) {
        outcome.envFile = await writeProjectEnv(values);
        outcome.written = Object.keys(values);
        if (values[IDP_ENV.clientSecret] && (await readableByOthers(outcome.envFile))) ctx.out.warn(`${outcome.envFile} holds a secret and is readable by other users: chmod 600 it`);
        ctx.out.success(`${outcome.written.join(', ')} written to ${outcome.envFile}`);
      }
      ctx.out.data(outcome, renderRecord);
    }),
  { calls: ['POST /v4/platform/provisioning/idp-apps', 'POST /v4/platform/provisioning/idp-apps/{clientId}/rotate-secret'] },
);
