import { Command } from '@commander-js/extra-typings';
import { command as provision } from './provision.ts';
import { command as readiness } from './readiness.ts';
import { command as request } from './request.ts';
import { command as status } from './status.ts';

export const command = new Command('workflow')
  .description("Workflows: provision their configuration, check their runtime status and the tenant's readiness, request a runtime binding")
  .addCommand(provision)
  .addCommand(readiness)
  .addCommand(status)
  .addCommand(request);
