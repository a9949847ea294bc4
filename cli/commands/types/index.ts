import { Command } from '@commander-js/extra-typings';
import { command as diff } from './diff.ts';
import { command as pull } from './pull.ts';
import { command as seed } from './seed.ts';
import { command as validate } from './validate.ts';

export const command = new Command('types')
  .description("The project's object types: validate, compare, seed to a tenant, pull")
  .addCommand(seed)
  .addCommand(diff)
  .addCommand(pull)
  .addCommand(validate);
