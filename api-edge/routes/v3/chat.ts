import {
  ChatEventSchema,
  ConversationListSchema,
  ConversationMessagesSchema,
  ResumeChatInputSchema,
  SendChatInputSchema,
  untrusted,
} from '../../../control-plane/contracts.ts';
import { chatEventStream } from '../chat-stream.ts';
import { param } from '../params.ts';
import { jsonObjectBody } from '../request-input.ts';
import { defineRoute, NIL_ID } from '../route.ts';

const conversationPath = { conversationId: ResumeChatInputSchema.shape.conversationId };

/**
 * v3 chat: `POST /chat` answers with server-sent events; the answer goes on being produced when
 * the client leaves, and `GET .../messages/:messageId/events` with `Last-Event-ID` replays what it
 * missed and follows the rest. Conversations are the caller's own.
 */
export const v3ChatRoutes = [
  defineRoute({
    method: 'POST',
    path: '/chat',
    procedure: 'chat.send',
    tenant: 'header',
    input: { body: { schema: SendChatInputSchema } },
    output: { 200: { description: 'The answer as it is produced: `status`, `message`, `citation`, then `done` or `error`', events: ChatEventSchema, streamIds: true } },
    docs: {
      operationId: 'sendChatMessage',
      summary: 'Ask a question and stream the answer (server-sent events)',
      tag: 'Chat',
      description: 'Send `Accept: text/event-stream`. A refusal (400, 403, 404, 429) is a JSON answer before any stream starts. Each event has an `id` (its number in the answer, for `Last-Event-ID`); comment lines keep an idle stream open. The answer goes on being produced when the client leaves: resume it with `GET /chat/conversations/{conversationId}/messages/{messageId}/events`.',
    },
    sample: { body: { message: 'route case' } },
    handler: ({ request, body, call, procedure, options }) =>
      chatEventStream(procedure.subscription(call(), jsonObjectBody(body), { signal: request.signal }), { heartbeatMs: options.sseHeartbeatMs }),
  }),
  defineRoute({
    method: 'GET',
    path: '/chat/conversations',
    procedure: 'chat.conversations',
    tenant: 'header',
    input: {},
    output: { 200: { description: 'Conversations', schema: ConversationListSchema } },
    docs: { operationId: 'listConversations', summary: "The caller's conversations, most recently active first", tag: 'Chat' },
    sample: {},
    handler: async ({ call, procedure }) => ({ data: await procedure.query(call(), undefined) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/chat/conversations/:conversationId',
    procedure: 'chat.conversation',
    tenant: 'header',
    input: { path: conversationPath },
    output: { 200: { description: 'The conversation; assistant messages carry their citations', schema: ConversationMessagesSchema } },
    docs: { operationId: 'getConversation', summary: 'A conversation of the caller with its messages', tag: 'Chat' },
    sample: { params: { conversationId: NIL_ID } },
    handler: ({ params, call, procedure }) => procedure.query(call(), { conversationId: params.conversationId }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/chat/conversations/:conversationId',
    procedure: 'chat.deleteConversation',
    tenant: 'header',
    input: { path: conversationPath },
    output: { 204: { description: 'Deleted' } },
    docs: { operationId: 'deleteConversation', summary: 'Delete a conversation of the caller', tag: 'Chat' },
    sample: { params: { conversationId: NIL_ID } },
    handler: async ({ params, set, call, procedure }) => {
      await procedure.mutation(call(), { conversationId: params.conversationId });
      set.status = 204;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/chat/conversations/:conversationId/messages/:messageId/events',
    procedure: 'chat.resume',
    tenant: 'header',
    input: {
      path: { ...conversationPath, messageId: ResumeChatInputSchema.shape.messageId },
      headers: { 'Last-Event-ID': param(ResumeChatInputSchema.shape.lastEventId, { description: 'The id of the last event the client has; none: from the start' }) },
    },
    output: { 200: { description: "The answer's events after Last-Event-ID, until `done` or `error`", events: ChatEventSchema, streamIds: true } },
    docs: {
      operationId: 'resumeChatAnswer',
      summary: 'Resume an answer: replay the events after Last-Event-ID, then follow the rest',
      tag: 'Chat',
      description: 'A user may follow at most 5 resumed answers at a time, and an answer may be resumed by at most 3 clients at a time: beyond, 429 before any stream starts.',
    },
    sample: { params: { conversationId: NIL_ID, messageId: NIL_ID } },
    handler: ({ request, params, call, procedure, options }) => {
      const input = { conversationId: params.conversationId, messageId: params.messageId, lastEventId: untrusted(request.headers.get('last-event-id') ?? undefined) };
      return chatEventStream(procedure.subscription(call(), input, { signal: request.signal }), { heartbeatMs: options.sseHeartbeatMs });
    },
  }),
];
