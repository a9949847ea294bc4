import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from '../_top-level.ts';
import { command as diff } from './diff.ts';
import { command as pull } from './pull.ts';
import { command as seed } from './seed.ts';
import { command as validate } from './validate.ts';

export const command = new Command('types')
  .description(TOP_LEVEL.types.description)
  .addCommand(seed)
  .addCommand(diff)
  .addCommand(pull)
  .addCommand(validate);
