import { withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { CliError } from '../../errors.ts';
import type { ChatEvent } from '../../services/chat.service.ts';
import { renderCitations } from './_render.ts';
import { chatCommand, chatRequest, shellWord } from './_options.ts';

export const command = withMeta(
  chatCommand(
    'stream',
    "Send one message to a workflow's stage and print the answer as it is written, until data: [DONE]; with --format json, each event as one line of JSON as it arrives",
  ).action(async (message, options, cmd) => {
    const { createChatService } = await import('../../services/chat.service.ts');
    const ctx = contextOf(cmd);
    const { out } = ctx;
    const request = await chatRequest(ctx, message, options);
    const chat = createChatService(await ctx.api());
    const citations: Extract<ChatEvent, { type: 'citation' }>['data'][] = [];
    let failure: Extract<ChatEvent, { type: 'error' }>['data'] | undefined;
    let written = false;
    const started = await chat.stream(request, (event) => {
      if (out.format === 'json') {
        process.stdout.write(JSON.stringify(event) + '\n');
        if (event.type === 'error') failure = event.data;
        return;
      }
      if (event.type === 'message' && event.data.delta) {
        process.stdout.write(event.data.delta);
        written = true;
      } else if (event.type === 'citation') citations.push(event.data);
      else if (event.type === 'error') failure = event.data;
    });
    if (out.format === 'text') {
      if (written) process.stdout.write('\n');
      if (citations.length) out.data(citations, renderCitations);
    }
    out.info(out.errColors.dim(`conversation ${started.conversationId} (continue it with --conversation-id ${shellWord(started.conversationId)})`));
    if (failure) throw new CliError('E203', { details: `the answer failed: ${failure.code} ${failure.message}` });
  }),
  { calls: ['POST /v4/ai/chat/stream/{tenantId}/{workflowId}/{stage}'] },
);
