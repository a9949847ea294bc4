import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import {
  ConversationMessagesSchema,
  ConversationRefSchema,
  ConversationSchema,
  ResumeChatInputSchema,
  SendChatInputSchema,
  WorkflowChatAnswerSchema,
  WorkflowChatInputSchema,
} from './chat.schema.ts';
import type { ChatService } from './chat.service.ts';

/** What these procedures call of the chat service: the API's context holds these functions and no others (app/services.ts). */
export const CHAT_API = ['askWorkflow', 'get', 'list', 'remove', 'resume', 'send', 'streamWorkflow'] as const satisfies readonly (keyof ChatService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    chat: Pick<ChatService, (typeof CHAT_API)[number]>;
  }
}

/** AI chat: streamed answers (subscriptions: the ids first, then numbered events), conversations, v4 chat per workflow. */
export const chatRouter = t.router({
  send: tenantProcedure('chat.access')
    .input(SendChatInputSchema)
    .subscription(({ ctx, input, signal }) => ctx.services.chat.send(ctx.actor, input, signal)),
  resume: tenantProcedure('chat.access')
    .input(ResumeChatInputSchema)
    .subscription(({ ctx, input, signal }) => ctx.services.chat.resume(ctx.actor, input, signal)),
  conversations: tenantProcedure('chat.access')
    .output(z.array(ConversationSchema))
    .query(({ ctx }) => ctx.services.chat.list(ctx.actor)),
  conversation: tenantProcedure('chat.access')
    .input(ConversationRefSchema)
    .output(ConversationMessagesSchema)
    .query(({ ctx, input }) => ctx.services.chat.get(ctx.actor, input.conversationId)),
  deleteConversation: tenantProcedure('chat.access')
    .input(ConversationRefSchema)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.chat.remove(ctx.actor, input.conversationId)),
  askWorkflow: tenantProcedure('chat.access')
    .input(WorkflowChatInputSchema)
    .output(WorkflowChatAnswerSchema)
    .mutation(({ ctx, input }) => ctx.services.chat.askWorkflow(ctx.actor, input)),
  streamWorkflow: tenantProcedure('chat.access')
    .input(WorkflowChatInputSchema)
    .subscription(({ ctx, input, signal }) => ctx.services.chat.streamWorkflow(ctx.actor, input, signal)),
});
