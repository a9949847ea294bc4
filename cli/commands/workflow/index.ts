import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from '../_top-level.ts';
import { command as provision } from './provision.ts';
import { command as readiness } from './readiness.ts';
import { command as request } from './request.ts';
import { command as status } from './status.ts';

export const command = new Command('workflow')
  .description(TOP_LEVEL.workflow.description)
  .addCommand(provision)
  .addCommand(readiness)
  .addCommand(status)
  .addCommand(request);
