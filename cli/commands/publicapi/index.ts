import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from '../_top-level.ts';
import { command as del } from './delete.ts';
import { command as get } from './get.ts';
import { command as patch } from './patch.ts';
import { command as post } from './post.ts';
import { command as put } from './put.ts';

export const command = new Command('publicapi')
  .description(TOP_LEVEL.publicapi.description)
  .addCommand(get)
  .addCommand(post)
  .addCommand(patch)
  .addCommand(put)
  .addCommand(del);
