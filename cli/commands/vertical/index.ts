import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from '../_top-level.ts';
import { command as create } from './create.ts';
import { command as list } from './list.ts';
import { command as provision } from './provision.ts';
import { command as select } from './select.ts';

export const command = new Command('vertical')
  .description(TOP_LEVEL.vertical.description)
  .addCommand(list)
  .addCommand(create)
  .addCommand(select)
  .addCommand(provision);
