import { z } from 'zod';
import { ChatEventSchema, WorkflowChatAnswerSchema, WorkflowChatBodySchema, WorkflowChatInputSchema } from '../../../control-plane/contracts.ts';
import { chatEventStream } from '../chat-stream.ts';
import { tenantPath } from '../params.ts';
import { bodyWithPath } from '../request-input.ts';
import { defineRoute } from '../route.ts';

/**
 * The answer names the conversation `conversation_id`, as the request does (seed 001's name), so a
 * client sends back what it got; `conversationId`, the name it answered with first, stays beside it.
 */
const AnswerSchema = WorkflowChatAnswerSchema.extend({
  conversation_id: z.string().meta({ description: 'The conversation, as the request named it (or the UUID of a new one)' }),
  conversationId: z.string().meta({ deprecated: true, description: 'Deprecated: the same value as `conversation_id`' }),
});

const stagePath = { ...tenantPath, workflowId: WorkflowChatInputSchema.shape.workflowId, stage: WorkflowChatInputSchema.shape.stage };

/**
 * v4 chat per tenant, workflow and stage (`{message, conversation_id, params}`): answered as one
 * JSON document, or streamed as server-sent events (the v3 events) ending with `data: [DONE]`.
 */
export const v4AiChatRoutes = [
  defineRoute({
    method: 'POST',
    path: '/ai/chat/:tenantId/:workflowId/:stage',
    procedure: 'chat.askWorkflow',
    tenant: 'path',
    input: { path: stagePath, body: { schema: WorkflowChatBodySchema } },
    output: { 200: { description: 'The answer with its citations, ids and token usage', schema: AnswerSchema } },
    docs: {
      operationId: 'chatWithWorkflow',
      summary: 'Ask a workflow stage a question',
      tag: 'AI',
      description: "The workflow (its `shared-workflow-config` key) and stage set the prompts; its `shared-chatbot-config` and `shared-ai-profile` the model and retrieval. `conversation_id` continues a conversation, or starts one under that id. An unknown workflow or stage is 404; a workflow without an AI runtime binding is 409.",
      errors: [409, 502],
    },
    sample: { params: { workflowId: 'route-case', stage: 'chat' }, body: { message: 'route case' } },
    handler: async ({ params, body, call, procedure }) => {
      const answer = await procedure.mutation(call(params.tenantId), bodyWithPath(body, { workflowId: params.workflowId, stage: params.stage }));
      return { ...answer, conversation_id: answer.conversationId };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/ai/chat/stream/:tenantId/:workflowId/:stage',
    procedure: 'chat.streamWorkflow',
    tenant: 'path',
    input: { path: stagePath, body: { schema: WorkflowChatBodySchema } },
    output: { 200: { description: 'The answer as it is produced, then `data: [DONE]`', events: ChatEventSchema, done: true, streamIds: true } },
    docs: {
      operationId: 'streamChatWithWorkflow',
      summary: 'Ask a workflow stage a question and stream the answer (server-sent events)',
      tag: 'AI',
      description: 'The events of v3 chat, then the literal line `data: [DONE]`. Refusals are JSON answers before any stream starts.',
      errors: [409],
    },
    sample: { params: { workflowId: 'route-case', stage: 'chat' }, body: { message: 'route case' } },
    handler: ({ request, params, body, call, procedure, options }) =>
      chatEventStream(
        procedure.subscription(call(params.tenantId), bodyWithPath(body, { workflowId: params.workflowId, stage: params.stage }), { signal: request.signal }),
        { heartbeatMs: options.sseHeartbeatMs, end: 'data: [DONE]\n\n' },
      ),
  }),
];
