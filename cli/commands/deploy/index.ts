import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from '../_top-level.ts';
import { command as setup } from './setup.ts';
import { command as status } from './status.ts';
import { command as trigger } from './trigger.ts';

export const command = new Command('deploy')
  .description(TOP_LEVEL.deploy.description)
  .addCommand(setup)
  .addCommand(trigger)
  .addCommand(status);
