import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from './_top-level.ts';
import { withMeta } from '../command.ts';
import { clearLocalSession, readAllTokens } from '../config.ts';
import { contextOf } from '../context.ts';

export const command = withMeta(
  new Command('logout')
    .description(TOP_LEVEL.logout.description)
    .action(async (_options, cmd) => {
      const { revokeTokens } = await import('../services/login.service.ts');
      const ctx = contextOf(cmd);
      // Revoked first, forgotten in any case: a provider out of reach must not keep a user logged in here.
      for (const tokens of Object.values(await readAllTokens())) {
        const result = await revokeTokens(tokens);
        if (!result.revoked) ctx.out.warn(`could not revoke the tokens at ${result.issuer} (${result.reason}); they are forgotten here, and the refresh token stays valid there until it expires`);
      }
      const { removedTokens } = await clearLocalSession();
      ctx.out.success(removedTokens ? 'Logged out.' : 'Not logged in; tenant context cleared.');
    }),
  { calls: [], plainText: true },
);
