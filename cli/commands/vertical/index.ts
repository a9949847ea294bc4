import { Command } from '@commander-js/extra-typings';
import { command as create } from './create.ts';
import { command as list } from './list.ts';
import { command as provision } from './provision.ts';
import { command as select } from './select.ts';

export const command = new Command('vertical')
  .description("Apps (vertical enrollments) of the company tenant: list, create, select for the project, provision their storage")
  .addCommand(list)
  .addCommand(create)
  .addCommand(select)
  .addCommand(provision);
