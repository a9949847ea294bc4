import { Command } from '@commander-js/extra-typings';
import { command as list } from './list.ts';
import { command as pull } from './pull.ts';
import { command as push } from './push.ts';

export const command = new Command('env')
  .description("The project's .env.local and the app's configuration in the platform's store: list, pull, push")
  .addCommand(list)
  .addCommand(pull)
  .addCommand(push);
