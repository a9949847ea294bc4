import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from '../_top-level.ts';
import { command as decline } from './decline.ts';
import { command as invite } from './invite.ts';
import { command as provisionMe } from './provision-me.ts';
import { command as remove } from './remove.ts';

export const command = new Command('user').description(TOP_LEVEL.user.description)
  .addCommand(invite)
  .addCommand(remove)
  .addCommand(provisionMe)
  .addCommand(decline);
