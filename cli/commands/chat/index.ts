import { Command } from '@commander-js/extra-typings';
import { TOP_LEVEL } from '../_top-level.ts';
import { command as send } from './send.ts';
import { command as stream } from './stream.ts';

export const command = new Command('chat')
  .description(TOP_LEVEL.chat.description)
  .addCommand(send)
  .addCommand(stream);
