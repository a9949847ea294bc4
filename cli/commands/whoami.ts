import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from './_top-level.ts';
import { withMeta } from '../command.ts';
import { readTenantContext, readTokens } from '../config.ts';
import { contextOf } from '../context.ts';
import { fields } from '../output.ts';

export const command = withMeta(
  new Command('whoami')
    .description(TOP_LEVEL.whoami.description)
    .action(async (_options, cmd) => {
      const { jwtClaims } = await import('../services/api-client.ts');
      const ctx = contextOf(cmd);
      const fromEnv = process.env['SVC_TOKEN'] || undefined;
      const token = fromEnv ?? (await readTokens(ctx.profile)).tokens?.accessToken;
      const claims = token ? jwtClaims(token) : undefined;
      const exp = typeof claims?.['exp'] === 'number' ? new Date(claims['exp'] * 1000) : undefined;
      const status = !token ? 'not logged in' : exp && exp.getTime() <= Date.now() ? 'token expired' : 'logged in';
      const tenant = await readTenantContext(ctx.profile);
      const style = { colors: ctx.out.colors, simple: ctx.out.simple };
      ctx.out.text(
        fields(
          [
            ['status', status],
            ['user', String(claims?.['email'] ?? claims?.['sub'] ?? '-')],
            ['token', !token ? '-' : fromEnv ? 'SVC_TOKEN' : '~/.svc/tokens.json'],
            ['expires', exp ? exp.toISOString() : '-'],
            ['tenant', process.env['SVC_TENANT_ID'] ?? (tenant ? `${tenant.tenantSlug ?? ''} ${tenant.tenantId}`.trim() : '-')],
            ['profile', ctx.profile],
          ],
          style,
        ),
      );
    }),
  { calls: [], plainText: true },
);
