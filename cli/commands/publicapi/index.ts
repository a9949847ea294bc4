import { Command } from '@commander-js/extra-typings';
import { command as del } from './delete.ts';
import { command as get } from './get.ts';
import { command as patch } from './patch.ts';
import { command as post } from './post.ts';
import { command as put } from './put.ts';

export const command = new Command('publicapi')
  .description('Call any allowed /v4/ path with your token (the platform still authorizes it)')
  .addCommand(get)
  .addCommand(post)
  .addCommand(patch)
  .addCommand(put)
  .addCommand(del);
