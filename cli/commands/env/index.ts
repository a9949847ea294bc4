import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from '../_top-level.ts';
import { command as list } from './list.ts';
import { command as pull } from './pull.ts';
import { command as push } from './push.ts';

export const command = new Command('env')
  .description(TOP_LEVEL.env.description)
  .addCommand(list)
  .addCommand(pull)
  .addCommand(push);
