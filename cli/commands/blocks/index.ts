import { Command } from '@commander-js/extra-typings';
import { command as describe } from './describe.ts';
import { command as list } from './list.ts';
import { command as readiness } from './readiness.ts';
import { command as schema } from './schema.ts';
import { command as validate } from './validate.ts';

export const command = new Command('blocks')
  .description("The platform's building blocks (catalog that ships with the client, and a project's own in svc.blocks.json): list, describe, readiness per package profile, the manifest's JSON Schema, validation")
  .addCommand(list)
  .addCommand(describe)
  .addCommand(readiness)
  .addCommand(schema)
  .addCommand(validate);
