import { Elysia } from 'elysia';
import { untrusted, type ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { chatEventStream } from '../chat-stream.ts';
import { jsonObjectBody } from '../request-input.ts';

/**
 * v3 chat: `POST /chat` answers with server-sent events; the answer goes on being produced when
 * the client leaves, and `GET .../messages/:messageId/events` with `Last-Event-ID` replays what it
 * missed and follows the rest. Conversations are the caller's own.
 */
export function v3ChatRoutes(cp: ControlPlane, calls: RequestCalls, options: { heartbeatMs?: number } = {}) {
  return new Elysia({ name: 'v3-chat' })
    .post('/chat', ({ request, body }) =>
      chatEventStream(cp.subscription(calls.of(request), 'chat', 'send', jsonObjectBody(body), { signal: request.signal }), options),
    )
    .get('/chat/conversations', async ({ request }) => ({ data: await cp.query(calls.of(request), 'chat', 'conversations', undefined) }))
    .get('/chat/conversations/:conversationId', ({ request, params }) =>
      cp.query(calls.of(request), 'chat', 'conversation', { conversationId: params.conversationId }),
    )
    .delete('/chat/conversations/:conversationId', async ({ request, params, set }) => {
      await cp.mutation(calls.of(request), 'chat', 'deleteConversation', { conversationId: params.conversationId });
      set.status = 204;
    })
    .get('/chat/conversations/:conversationId/messages/:messageId/events', ({ request, params }) => {
      const input = { conversationId: params.conversationId, messageId: params.messageId, lastEventId: untrusted(request.headers.get('last-event-id') ?? undefined) };
      return chatEventStream(cp.subscription(calls.of(request), 'chat', 'resume', input, { signal: request.signal }), options);
    });
}
