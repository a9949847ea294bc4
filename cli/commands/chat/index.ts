import { Command } from '@commander-js/extra-typings';
import { command as send } from './send.ts';
import { command as stream } from './stream.ts';

export const command = new Command('chat')
  .description("Chat with a workflow's stage in the active tenant: one answer, or the answer streamed as it is written")
  .addCommand(send)
  .addCommand(stream);
