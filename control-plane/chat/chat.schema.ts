import { z } from 'zod';
import { ResourceTypeNameSchema } from '../resources/resources.schema.ts';

/** Longest chat message, in characters (the seed leaves it open). */
export const MAX_MESSAGE_CHARS = 32_000;
/** Bounds of `options.maxTokens` (answer length in tokens) and its default. */
export const MAX_ANSWER_TOKENS = 4096;
export const DEFAULT_ANSWER_TOKENS = 512;
export const DEFAULT_TEMPERATURE = 0.7;
/** The seed's limit: concurrent chat streams per tenant (an `ai.chat` override may set `maxConcurrentStreams`). */
export const DEFAULT_CONCURRENT_STREAMS = 100;

const MessageTextSchema = z.string({ error: 'is required' }).trim().min(1, 'is required').max(MAX_MESSAGE_CHARS, `must be at most ${MAX_MESSAGE_CHARS} characters`);
const TemperatureSchema = z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1');
const MaxTokensSchema = z.number().int('must be a whole number').min(1, `must be between 1 and ${MAX_ANSWER_TOKENS}`).max(MAX_ANSWER_TOKENS, `must be between 1 and ${MAX_ANSWER_TOKENS}`);

/** Resources and documents the answer must draw on, beside what retrieval finds; each must be the tenant's. */
export const ChatContextSchema = z
  .object({
    resources: z.array(z.object({ type: ResourceTypeNameSchema, id: z.string().min(1).max(100) }).strict()).max(20).default([]),
    documents: z.array(z.string().min(1).max(100)).max(20).default([]),
  })
  .strict();
export type ChatContext = z.infer<typeof ChatContextSchema>;

export const ChatOptionsSchema = z
  .object({
    temperature: TemperatureSchema.default(DEFAULT_TEMPERATURE),
    maxTokens: MaxTokensSchema.default(DEFAULT_ANSWER_TOKENS),
    systemPrompt: z.string().max(20_000).optional(),
    context: ChatContextSchema.default({ resources: [], documents: [] }),
  })
  .strict();

/**
 * A conversation's id as a client names it, in v3 and v4: the UUID it is stored under, or a name a v4
 * client made up (`support-42`), which reaches the same conversation (conversation-names.ts).
 */
export const ConversationNameSchema = z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters');

/** v3 `POST /chat`. */
export const SendChatInputSchema = z
  .object({
    message: MessageTextSchema,
    /** Continues one of the caller's conversations; a new one starts without it. */
    conversationId: ConversationNameSchema.optional(),
    options: ChatOptionsSchema.default({ temperature: DEFAULT_TEMPERATURE, maxTokens: DEFAULT_ANSWER_TOKENS, context: { resources: [], documents: [] } }),
  })
  .strict();
export type SendChatInput = z.infer<typeof SendChatInputSchema>;

export const CitationSchema = z.object({
  source: z.string(),
  sourceType: z.enum(['document', 'resource', 'step']),
  content: z.string(),
  confidence: z.number().min(0).max(1),
});

export const UsageSchema = z.object({ promptTokens: z.number().int(), completionTokens: z.number().int(), totalTokens: z.number().int() });

/** Progress of an answer: `searching` (retrieval), then `answering` (the model writes). */
export const CHAT_STATUSES = ['searching', 'answering'] as const;

/** One event of an answer, as the seed names them: `{type, data}`. */
export const ChatEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('status'), data: z.object({ status: z.enum(CHAT_STATUSES), message: z.string() }) }),
  z.object({ type: z.literal('citation'), data: CitationSchema }),
  z.object({ type: z.literal('message'), data: z.object({ content: z.string(), delta: z.string() }) }),
  z.object({ type: z.literal('error'), data: z.object({ code: z.string(), message: z.string() }) }),
  z.object({ type: z.literal('done'), data: z.object({ conversationId: z.string(), messageId: z.string(), usage: UsageSchema }) }),
]);
export type ChatEvent = z.infer<typeof ChatEventSchema>;

/** An event with its SSE id: its number in the answer, from 1. */
export interface NumberedEvent {
  id: number;
  event: ChatEvent;
}

/** What a chat stream yields: first the ids of the conversation and the answer, then the answer's events. */
export type ChatStreamItem = { started: { conversationId: string; messageId: string } } | NumberedEvent;

export const isTerminal = (event: ChatEvent) => event.type === 'done' || event.type === 'error';

/** `GET /chat/conversations/:conversationId/messages/:messageId/events` with `Last-Event-ID`. */
export const ResumeChatInputSchema = z
  .object({
    conversationId: ConversationNameSchema,
    messageId: z.string().min(1).max(100),
    /** The last event the client has; the stream starts after it. */
    lastEventId: z.coerce.number({ error: 'must be the id of an event' }).int('must be the id of an event').min(0, 'must be the id of an event').max(1_000_000_000).default(0),
  })
  .strict();

export const ConversationRefSchema = z.object({ conversationId: ConversationNameSchema }).strict();

export const ConversationSchema = z.object({
  id: z.string(),
  title: z.string(),
  messageCount: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Conversation = z.infer<typeof ConversationSchema>;

export const MessageSchema = z.object({
  id: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  /** On assistant messages. */
  citations: z.array(CitationSchema).optional(),
  /** `streaming` while the answer is produced (no content yet), `failed` when it could not be finished (no content, `error`). */
  status: z.enum(['streaming', 'complete', 'failed']),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  timestamp: z.string(),
});
export type Message = z.infer<typeof MessageSchema>;

export const ConversationListSchema = z.object({ data: z.array(ConversationSchema) });
export const ConversationMessagesSchema = z.object({ id: z.string(), title: z.string(), messages: z.array(MessageSchema) });

const ParamNameSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'must be a parameter name such as customer_name');

/** v4 chat params: values that fill the stage prompt's `{{name}}` places; `temperature` and `max_tokens` among them override the AI profile's. */
export const WorkflowChatParamsSchema = z
  .record(ParamNameSchema, z.union([z.string().max(2000), z.number(), z.boolean(), z.null()]))
  .superRefine((params, ctx) => {
    if (Object.keys(params).length > 50) ctx.addIssue({ code: 'custom', message: 'must have at most 50 parameters' });
    const { temperature, max_tokens: maxTokens } = params;
    if (temperature !== undefined && !TemperatureSchema.safeParse(temperature).success) ctx.addIssue({ code: 'custom', path: ['temperature'], message: 'must be a number between 0 and 1' });
    if (maxTokens !== undefined && !MaxTokensSchema.safeParse(maxTokens).success) ctx.addIssue({ code: 'custom', path: ['max_tokens'], message: `must be a whole number between 1 and ${MAX_ANSWER_TOKENS}` });
  });

/**
 * The body of v4 `POST /v4/ai/chat/{tenantId}/{workflowId}/{stage}`: `conversation_id` names the
 * conversation (the client makes one up for a new one: a UUID or any other name, echoed back as given).
 */
export const WorkflowChatBodySchema = z
  .object({
    message: MessageTextSchema,
    conversation_id: ConversationNameSchema.optional(),
    params: WorkflowChatParamsSchema.default({}),
  })
  .strict();

export const WorkflowChatInputSchema = WorkflowChatBodySchema.extend({
  workflowId: z.string().min(1).max(100),
  stage: z.string().min(1).max(100),
}).strict();
export type WorkflowChatInput = z.infer<typeof WorkflowChatInputSchema>;

export const WorkflowChatAnswerSchema = z.object({
  answer: z.string(),
  citations: z.array(CitationSchema),
  conversationId: z.string(),
  messageId: z.string(),
  workflowId: z.string(),
  stage: z.string(),
  usage: UsageSchema,
});
export type WorkflowChatAnswer = z.infer<typeof WorkflowChatAnswerSchema>;

/** Whether a v4 workflow can run now (seed 001), with the reason. */
export const RUNTIME_STATUSES = ['available', 'operator_required', 'paid_upgrade_required', 'rate_limited', 'blocked', 'unsupported'] as const;
export type RuntimeStatus = (typeof RUNTIME_STATUSES)[number];

export const WorkflowRuntimeSchema = z.object({
  workflowKey: z.string(),
  status: z.enum(RUNTIME_STATUSES),
  reason: z.string(),
  displayName: z.string().nullable(),
  /** The AI provider and model of its binding, when it has one. */
  provider: z.string().nullable(),
  model: z.string().nullable(),
  stages: z.array(z.string()),
});
export type WorkflowRuntime = z.infer<typeof WorkflowRuntimeSchema>;
