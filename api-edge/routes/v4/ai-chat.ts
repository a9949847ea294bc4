import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { chatEventStream } from '../chat-stream.ts';
import { bodyWithPath } from '../request-input.ts';

/**
 * v4 chat per tenant, workflow and stage (`{message, conversation_id, params}`): answered as one
 * JSON document, or streamed as server-sent events (the v3 events) ending with `data: [DONE]`.
 */
export function v4AiChatRoutes(cp: ControlPlane, calls: RequestCalls, options: { heartbeatMs?: number } = {}) {
  return new Elysia({ name: 'v4-ai-chat' })
    .post('/ai/chat/:tenantId/:workflowId/:stage', ({ request, params, body }) =>
      cp.mutation(calls.of(request, params.tenantId), 'chat', 'askWorkflow', bodyWithPath(body, { workflowId: params.workflowId, stage: params.stage })),
    )
    .post('/ai/chat/stream/:tenantId/:workflowId/:stage', ({ request, params, body }) =>
      chatEventStream(
        cp.subscription(calls.of(request, params.tenantId), 'chat', 'streamWorkflow', bodyWithPath(body, { workflowId: params.workflowId, stage: params.stage }), { signal: request.signal }),
        { ...options, end: 'data: [DONE]\n\n' },
      ),
    );
}
