import { Command } from '@commander-js/extra-typings';
import { command as create } from './create.ts';
import { command as del } from './delete.ts';
import { command as info } from './info.ts';
import { command as list } from './list.ts';
import { command as select } from './select.ts';

export const command = new Command('tenant').description('Your tenants and the active one; create and delete tenants')
  .addCommand(list)
  .addCommand(select)
  .addCommand(info)
  .addCommand(create)
  .addCommand(del);
