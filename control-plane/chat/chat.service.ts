import type { ContextPassage } from '../ai/model.ts';
import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import { secondsToNextUtcDay } from '../capabilities/daily-limit.ts';
import type { Db } from '../db/client.ts';
import { ForbiddenError, NotFoundError, RateLimitError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { ResourcesService } from '../resources/resources.service.ts';
import { createAnswerResumes } from './answer-resumes.ts';
import { asUser } from './answer-scope.ts';
import { createAnswerStarts } from './answer-starts.ts';
import { createAnswerStreams, type AnswerStreamSettings } from './answer-streams.ts';
import type { AnsweringService } from './answering.ts';
import { conversationIdOf } from './conversation-names.ts';
import { countMessageToday, deleteConversation, findConversation, listConversations, listMessages, messagesToday, recordStepCharge } from './chat.repo.ts';
import type { ChatStreamItem, Conversation, Message, SendChatInput, WorkflowChatAnswer, WorkflowChatInput } from './chat.schema.ts';
import { DEFAULT_RETRIEVED, kindsFor } from './workflow-answers.ts';
import { createWorkflowConfigs } from './workflow-config.ts';
import { createWorkflowRuntimes } from './workflow-runtimes.ts';

/** Conversations listed (newest first); the seed gives the list no paging. */
const LISTED_CONVERSATIONS = 100;

export type ChatService = ReturnType<typeof createChatService>;

/**
 * AI chat: conversations private to their user, answers produced apart from any connection (see
 * answer-streams.ts) so that they complete and can be resumed when the client goes, v4 chat per
 * workflow and stage from the tenant's configuration resources, and the limits of each tenant:
 * the `ai.chat` capability, concurrent streams (100 unless its limits say `maxConcurrentStreams`)
 * and `maxMessagesPerDay`, counted in PostgreSQL so that every instance shares them.
 */
export function createChatService(deps: {
  db: Db;
  answering: AnsweringService;
  capabilities: Pick<CapabilitiesService, 'require' | 'evaluate' | 'catalog'>;
  resources: Pick<ResourcesService, 'list' | 'get'>;
  streams?: AnswerStreamSettings;
}) {
  const { db, answering } = deps;
  const streams = createAnswerStreams({ db, settings: deps.streams });
  const configs = createWorkflowConfigs({ resources: deps.resources });
  const leaseMs = deps.streams?.leaseMs ?? 30_000;

  const { start, collect } = createAnswerStarts({ db, answering, streams, leaseMs });
  const runtimes = createWorkflowRuntimes({ db, answering, capabilities: deps.capabilities, configs });
  const { workflowAnswer } = runtimes;
  const resumes = createAnswerResumes({ db, streams, leaseMs });

  return {
    /**
     * v3 `POST /chat`: refuses before anything streams (403 without `ai.chat`, 400 for context
     * the tenant does not have, 404 for a conversation the caller does not have, 429 at the
     * limits); then yields the conversation's and answer's ids, then the answer's events until
     * its end or until `signal` aborts (the answer goes on being produced and stored).
     */
    async *send(actor: Actor, input: SendChatInput, signal?: AbortSignal): AsyncGenerator<ChatStreamItem> {
      const { context } = input.options;
      if (context.resources.length && !actor.permissions.has('resources.read')) throw new ForbiddenError('missing permission resources.read (context resources)');
      if (context.documents.length && !actor.permissions.has('documents.read')) throw new ForbiddenError('missing permission documents.read (context documents)');
      const decision = await deps.capabilities.require(actor.tenantId, 'ai.chat');
      const passages: ContextPassage[] = await answering.contextPassages(actor, context);
      const scope = await start(
        actor,
        {
          question: input.message,
          conversation: { id: input.conversationId === undefined ? undefined : conversationIdOf(input.conversationId) },
          request: {
            systemPrompt: input.options.systemPrompt,
            temperature: input.options.temperature,
            maxTokens: input.options.maxTokens,
            passages,
            retrieval: { kinds: kindsFor(actor), limit: DEFAULT_RETRIEVED },
          },
        },
        decision,
      );
      yield { started: { conversationId: scope.conversationId, messageId: scope.messageId } };
      yield* streams.follow(scope, 0, signal);
    },

    resume: resumes.resume,

    /** The caller's conversations, most recently active first. */
    async list(actor: Actor): Promise<Conversation[]> {
      return asUser(db, actor, (tx) => listConversations(tx, LISTED_CONVERSATIONS));
    },

    /** A conversation of the caller's by its id, or by the name a v4 client gave it. */
    async get(actor: Actor, conversationId: string): Promise<{ id: string; title: string; messages: Message[] }> {
      return asUser(db, actor, async (tx) => {
        const conversation = await findConversation(tx, conversationIdOf(conversationId));
        if (!conversation) throw new NotFoundError('conversation');
        return { id: conversation.id, title: conversation.title, messages: await listMessages(tx, conversation.id) };
      });
    },

    /** Deletes a conversation (by id or v4 name) with its messages; an answer still in production stops. */
    async remove(actor: Actor, conversationId: string): Promise<void> {
      if (!(await asUser(db, actor, (tx) => deleteConversation(tx, conversationIdOf(conversationId))))) throw new NotFoundError('conversation');
    },

    /** v4 chat, answered whole: the same answer and citations the stream gives. */
    async askWorkflow(actor: Actor, input: WorkflowChatInput): Promise<WorkflowChatAnswer> {
      const { spec, decision } = await workflowAnswer(actor, input);
      const scope = await start(actor, spec, decision);
      const answer = await collect(scope, input.workflowId, input.stage);
      return { ...answer, conversationId: input.conversation_id ?? answer.conversationId };
    },

    /** v4 chat, streamed: as `send`. */
    async *streamWorkflow(actor: Actor, input: WorkflowChatInput, signal?: AbortSignal): AsyncGenerator<ChatStreamItem> {
      const { spec, decision } = await workflowAnswer(actor, input);
      const scope = await start(actor, spec, decision);
      const conversationId = input.conversation_id ?? scope.conversationId;
      yield { started: { conversationId, messageId: scope.messageId } };
      for await (const item of streams.follow(scope, 0, signal)) {
        yield item.event.type === 'done' ? { id: item.id, event: { type: 'done', data: { ...item.event.data, conversationId } } } : item;
      }
    },

    /**
     * The `ai.chat` capability and its daily messages, for answers given outside a chat route (an
     * orchestrate `ai_chat` step): 403 when the tenant may not chat, 429 when today's messages are
     * spent. `charge` counts one message, as a chat request does (a refused one is not counted);
     * without it nothing is counted. With `step`, the message is counted once per execution step,
     * however often the step is retried.
     */
    async allowance(tenantId: string, options: { charge: boolean; step?: { executionId: string; stepId: string } }): Promise<void> {
      const decision = await deps.capabilities.require(tenantId, 'ai.chat');
      const perDay = decision.limits.maxMessagesPerDay;
      if (perDay === undefined) return;
      await db.inTenant(tenantId, async (tx) => {
        if (options.charge && options.step && !(await recordStepCharge(tx, options.step))) return;
        const spent = options.charge ? (await countMessageToday(tx)) > perDay : (await messagesToday(tx)) >= perDay;
        if (spent) throw new RateLimitError(secondsToNextUtcDay(), `capability ai.chat allows ${perDay} chat messages a day (UTC) for this tenant, and today's are spent`);
      });
    },

    workflowRuntime: runtimes.workflowRuntime,
    listWorkflows: runtimes.listWorkflows,

    /** Answers this process is producing now. */
    producing: () => streams.producing(),
  };
}
