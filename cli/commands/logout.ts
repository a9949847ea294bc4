import { Command } from '@commander-js/extra-typings';
import { withMeta } from '../command.ts';
import { clearLocalSession } from '../config.ts';
import { contextOf } from '../context.ts';

export const command = withMeta(
  new Command('logout').description('Delete the tokens file and clear the tenant context (no API call)').action(async (_options, cmd) => {
    const ctx = contextOf(cmd);
    const { removedTokens } = await clearLocalSession();
    ctx.out.success(removedTokens ? 'Logged out.' : 'Not logged in; tenant context cleared.');
  }),
  { calls: [], plainText: true },
);
