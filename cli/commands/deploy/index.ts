import { Command } from '@commander-js/extra-typings';
import { command as setup } from './setup.ts';
import { command as status } from './status.ts';
import { command as trigger } from './trigger.ts';

export const command = new Command('deploy')
  .description("Deploy through the code host's Actions API (SVC_CODE_HOST_URL, GITHUB_TOKEN): repository secrets, workflow dispatch, runs; no platform call")
  .addCommand(setup)
  .addCommand(trigger)
  .addCommand(status);
