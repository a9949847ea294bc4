import { withMeta } from '../../command.ts';
import { contextOf } from '../../context.ts';
import { renderAnswer } from './_render.ts';
import { chatCommand, chatRequest, shellWord } from './_options.ts';

export const command = withMeta(
  chatCommand('send', "Send one message to a workflow's stage and print the answer with its citations; the conversation id goes to stderr").action(async (message, options, cmd) => {
    const { createChatService } = await import('../../services/chat.service.ts');
    const ctx = contextOf(cmd);
    const request = await chatRequest(ctx, message, options);
    const chat = createChatService(await ctx.api());
    const answer = await ctx.out.spin('Waiting for the answer', () => chat.send(request));
    ctx.out.data(answer, renderAnswer);
    ctx.out.info(ctx.out.errColors.dim(`conversation ${answer.conversation_id} (continue it with --conversation-id ${shellWord(answer.conversation_id)})`));
  }),
  { calls: ['POST /v4/ai/chat/{tenantId}/{workflowId}/{stage}'] },
);
