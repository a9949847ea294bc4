import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from '../_top-level.ts';
import { command as describe } from './describe.ts';
import { command as list } from './list.ts';
import { command as readiness } from './readiness.ts';
import { command as schema } from './schema.ts';
import { command as validate } from './validate.ts';

export const command = new Command('blocks')
  .description(TOP_LEVEL.blocks.description)
  .addCommand(list)
  .addCommand(describe)
  .addCommand(readiness)
  .addCommand(schema)
  .addCommand(validate);
