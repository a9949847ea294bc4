import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from '../_top-level.ts';
import { command as create } from './create.ts';
import { command as del } from './delete.ts';
import { command as info } from './info.ts';
import { command as list } from './list.ts';
import { command as select } from './select.ts';

export const command = new Command('tenant').description(TOP_LEVEL.tenant.description)
  .addCommand(list)
  .addCommand(select)
  .addCommand(info)
  .addCommand(create)
  .addCommand(del);
