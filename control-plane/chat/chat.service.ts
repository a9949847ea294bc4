import { randomUUID } from 'node:crypto';
import type { ContextPassage } from '../ai/model.ts';
import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import { secondsToNextUtcDay } from '../capabilities/daily-limit.ts';
import type { Decision } from '../capabilities/capabilities.schema.ts';
import type { Db, Tx } from '../db/client.ts';
import { ConflictError, DomainError, ForbiddenError, NotFoundError, RateLimitError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { systemActor } from '../identity/system-actor.ts';
import type { AnsweringService } from './answering.ts';
import { createAnswerStreams, type AnswerScope, type AnswerStreamSettings } from './answer-streams.ts';
import { conversationIdOf } from './conversation-names.ts';
import {
  actAsUser,
  conversationHistory,
  countLiveFollowers,
  countLiveStreams,
  deleteFollower,
  insertFollower,
  lockTenantFollowers,
  renewFollower,
  countMessageToday,
  recordStepCharge,
  deleteConversation,
  findConversation,
  findMessage,
  insertConversation,
  insertMessage,
  insertStream,
  listConversations,
  listMessages,
  lockTenantStreams,
  messagesToday,
  touchConversation,
} from './chat.repo.ts';
import {
  DEFAULT_CONCURRENT_STREAMS,
  type ChatStreamItem,
  type Conversation,
  type Message,
  type SendChatInput,
  type WorkflowChatAnswer,
  type WorkflowChatInput,
  type WorkflowRuntime,
} from './chat.schema.ts';
import { createWorkflowConfigs, modelChoiceOf, stagesOf, type WorkflowBinding, type WorkflowConfig } from './workflow-config.ts';
import type { ResourcesService } from '../resources/resources.service.ts';
import { answerSpecOf, DEFAULT_RETRIEVED, kindsFor, type AnswerSpec } from './workflow-answers.ts';

/** Earlier turns given to the model with a new question. */
const HISTORY_TURNS = 20;
/** Conversations listed (newest first); the seed gives the list no paging. */
const LISTED_CONVERSATIONS = 100;
const TITLE_CHARS = 80;
/**
 * Resumptions (`GET .../messages/:id/events`) one user may follow at a time, and one answer may
 * have at a time: each holds a connection and reads the answer's events until it ends.
 */
export const MAX_RESUMES_PER_USER = 5;
export const MAX_RESUMES_PER_MESSAGE = 3;
const RETRY_RESUME_AFTER_S = 5;

export type ChatService = ReturnType<typeof createChatService>;

function titleOf(message: string): string {
  const line = message.replace(/\s+/g, ' ').trim();
  if (line.length <= TITLE_CHARS) return line;
  const cut = line.slice(0, TITLE_CHARS - 1);
  return `${cut.slice(0, cut.lastIndexOf(' ') > 40 ? cut.lastIndexOf(' ') : cut.length)}…`;
}

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

  const asUser = <T>(actor: Actor, fn: (tx: Tx) => Promise<T>) =>
    db.inTenant(actor.tenantId, async (tx) => {
      await actAsUser(tx, actor.userId);
      return fn(tx);
    });

  const streamLimit = (decision: Decision) => decision.limits.maxConcurrentStreams ?? DEFAULT_CONCURRENT_STREAMS;

  /**
   * Records the question and an answer in production (refusing with 429 when the tenant's streams
   * or daily messages are spent), then produces the answer in the background.
   */
  async function start(actor: Actor, spec: AnswerSpec, decision: Decision): Promise<AnswerScope> {
    const { conversationId, messageId, history } = await asUser(actor, async (tx) => {
      await lockTenantStreams(tx);
      const limit = streamLimit(decision);
      if ((await countLiveStreams(tx)) >= limit) throw new RateLimitError(1);
      const perDay = decision.limits.maxMessagesPerDay;
      if (perDay !== undefined && (await countMessageToday(tx)) > perDay) throw new RateLimitError(secondsToNextUtcDay());
      let conversationId = spec.conversation.id;
      if (conversationId === undefined || !(await findConversation(tx, conversationId, true))) {
        if (conversationId !== undefined && !spec.conversation.createIfMissing) throw new NotFoundError('conversation');
        conversationId ??= randomUUID();
        const { workflowKey = null, stage = null } = spec.conversation;
        if (!(await insertConversation(tx, { id: conversationId, title: titleOf(spec.question), workflowKey, stage }))) throw new ConflictError('the conversation was started meanwhile');
      }
      const history = await conversationHistory(tx, conversationId, HISTORY_TURNS);
      await insertMessage(tx, { conversationId, role: 'user', status: 'complete', content: spec.question });
      const messageId = await insertMessage(tx, { conversationId, role: 'assistant', status: 'streaming', content: '' });
      await insertStream(tx, messageId, leaseMs);
      await touchConversation(tx, conversationId);
      return { conversationId, messageId, history };
    });
    const scope = { tenantId: actor.tenantId, userId: actor.userId, conversationId, messageId };
    const abort = new AbortController();
    streams.produce(scope, answering.answer(actor, { ...spec.request, question: spec.question, history, signal: abort.signal }), abort);
    return scope;
  }

  /** The events of an answer until its end, as a v4 JSON answer; an answer that failed is its error. */
  async function collect(scope: AnswerScope, workflowId: string, stage: string): Promise<WorkflowChatAnswer> {
    let answer = '';
    const citations: WorkflowChatAnswer['citations'] = [];
    for await (const { event } of streams.follow(scope, 0)) {
      if (event.type === 'message') answer = event.data.content;
      else if (event.type === 'citation') citations.push(event.data);
      else if (event.type === 'error') {
        const error = event.data.code === 'RATE_LIMIT_EXCEEDED' ? new RateLimitError(1) : new DomainError(event.data.code as DomainError['code'], event.data.message);
        throw error;
      } else if (event.type === 'done') {
        return { answer, citations, conversationId: scope.conversationId, messageId: scope.messageId, workflowId, stage, usage: event.data.usage };
      }
    }
    throw new DomainError('INTERNAL_ERROR', 'the answer ended without finishing');
  }

  /** Live streams and today's messages of a tenant, against its limits. */
  async function usageOf(tenantId: string, decision: Decision) {
    const { live, today } = await db.inTenant(tenantId, async (tx) => ({ live: await countLiveStreams(tx), today: await messagesToday(tx) }));
    return { liveStreams: live, streamLimit: streamLimit(decision), messagesToday: today, messagesPerDay: decision.limits.maxMessagesPerDay };
  }

  /**
   * Whether a workflow can chat now, and why: its configuration (none: `unsupported`; a draft:
   * `blocked`), the `ai.chat` capability (outside the plan: `paid_upgrade_required`; refused
   * otherwise: `blocked`), its AI runtime binding (none, or a provider this platform cannot
   * reach: `operator_required`), then the tenant's chat limits (`rate_limited`).
   */
  async function runtimeOf(
    tenantId: string,
    key: string,
    options: { stage?: string; checkLimits?: boolean } = {},
  ): Promise<{ runtime: WorkflowRuntime; workflow?: WorkflowConfig; binding?: WorkflowBinding; decision?: Decision }> {
    const workflow = await configs.findWorkflow(tenantId, key);
    const base = { workflowKey: workflow?.workflowKey ?? key, displayName: workflow?.displayName ?? null, provider: null, model: null, stages: workflow ? stagesOf(workflow).map((s) => s.id) : [] };
    const as = (status: WorkflowRuntime['status'], reason: string, extra: Partial<WorkflowRuntime> = {}): WorkflowRuntime => ({ ...base, status, reason, ...extra });
    if (!workflow) return { runtime: as('unsupported', `no workflow configuration (shared-workflow-config) of this tenant has the key "${key}"`) };
    if (options.stage !== undefined && !stagesOf(workflow).some((s) => s.id === options.stage)) throw new NotFoundError(`stage "${options.stage}" of workflow "${key}"`);
    if (workflow.status === 'draft') return { runtime: as('blocked', `workflow "${workflow.workflowKey}" is a draft; set its status to active`), workflow };
    const evaluation = await deps.capabilities.evaluate(systemActor(tenantId), { capabilities: ['ai.chat'], context: {} });
    const decision = evaluation.decisions['ai.chat']!;
    if (!decision.allowed) {
      const inPlan = deps.capabilities.catalog().items.find((c) => c.key === 'ai.chat')?.plans[evaluation.plan].included;
      return { runtime: as(inPlan ? 'blocked' : 'paid_upgrade_required', `capability ai.chat is not available to this tenant: ${decision.reason}`), workflow, decision };
    }
    const binding = await configs.bindingOf(tenantId, workflow, options.stage);
    if (!binding.chatbot) {
      return { runtime: as('operator_required', `no AI runtime is bound to workflow "${workflow.workflowKey}": it has no active shared-chatbot-config`), workflow, binding, decision };
    }
    const profileKey = binding.chatbot.aiProfileKey ?? workflow.aiProfileKey;
    if (!binding.profile) {
      const reason = profileKey ? `AI profile "${profileKey}" (shared-ai-profile) does not exist` : `the chatbot configuration of workflow "${workflow.workflowKey}" names no AI profile`;
      return { runtime: as('operator_required', reason), workflow, binding, decision };
    }
    const bound = { provider: binding.profile.provider, model: binding.profile.model ?? null };
    if (!answering.canRun(modelChoiceOf(binding.profile)!)) {
      return {
        runtime: as('operator_required', `provider "${binding.profile.provider}" needs the platform's OpenAI-compatible endpoint (AI_BASE_URL, AI_API_KEY, AI_MODEL), which is not configured`, bound),
        workflow,
        binding,
        decision,
      };
    }
    if (options.checkLimits !== false) {
      const usage = await usageOf(tenantId, decision);
      if (usage.liveStreams >= usage.streamLimit) return { runtime: as('rate_limited', `all ${usage.streamLimit} concurrent chat streams of the tenant are in use`, bound), workflow, binding, decision };
      if (usage.messagesPerDay !== undefined && usage.messagesToday >= usage.messagesPerDay) {
        return { runtime: as('rate_limited', `the tenant's ${usage.messagesPerDay} chat messages of today are spent`, bound), workflow, binding, decision };
      }
    }
    return { runtime: as('available', `answers through the ${bound.provider} provider${bound.model ? ` (model ${bound.model})` : ''}`, bound), workflow, binding, decision };
  }

  /** A v4 chat request as an answer to start: refused as its workflow's runtime status says (404, 403, 409). */
  async function workflowAnswer(actor: Actor, input: WorkflowChatInput): Promise<{ spec: AnswerSpec; decision: Decision }> {
    const { runtime, workflow, binding, decision } = await runtimeOf(actor.tenantId, input.workflowId, { stage: input.stage, checkLimits: false });
    if (runtime.status === 'unsupported') throw new NotFoundError(`workflow "${input.workflowId}"`);
    if (runtime.status === 'blocked' || runtime.status === 'paid_upgrade_required') throw new ForbiddenError(runtime.reason);
    if (runtime.status === 'operator_required') throw new ConflictError(runtime.reason, { status: runtime.status });
    return { spec: answerSpecOf(actor, input, workflow!, binding!), decision: decision! };
  }

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

    /**
     * The answer's ids, then its events after `lastEventId`, replayed then followed to its end;
     * 404 (before anything is yielded) for an answer the caller does not have.
     */
    async *resume(actor: Actor, input: { conversationId: string; messageId: string; lastEventId: number }, signal?: AbortSignal): AsyncGenerator<ChatStreamItem> {
      const { message, followerId } = await asUser(actor, async (tx) => {
        const message = await findMessage(tx, conversationIdOf(input.conversationId), input.messageId);
        if (!message || message.role !== 'assistant') throw new NotFoundError('answer');
        await lockTenantFollowers(tx);
        const live = await countLiveFollowers(tx, message.id);
        if (live.ofUser >= MAX_RESUMES_PER_USER) {
          throw new RateLimitError(RETRY_RESUME_AFTER_S, `resumed answers: a user may follow at most ${MAX_RESUMES_PER_USER} at a time; close one first`);
        }
        if (live.ofMessage >= MAX_RESUMES_PER_MESSAGE) {
          throw new RateLimitError(RETRY_RESUME_AFTER_S, `clients resuming this answer: at most ${MAX_RESUMES_PER_MESSAGE} at a time; close one first`);
        }
        return { message, followerId: await insertFollower(tx, message.id, leaseMs) };
      });
      const renew = setInterval(() => void asUser(actor, (tx) => renewFollower(tx, followerId, leaseMs)).catch(() => {}), Math.floor(leaseMs / 3));
      renew.unref();
      try {
        yield { started: { conversationId: message.conversationId, messageId: message.id } };
        yield* streams.follow({ tenantId: actor.tenantId, userId: actor.userId, conversationId: message.conversationId, messageId: message.id }, input.lastEventId, signal);
      } finally {
        clearInterval(renew);
        await asUser(actor, (tx) => deleteFollower(tx, followerId)).catch(() => {});
      }
    },

    /** The caller's conversations, most recently active first. */
    async list(actor: Actor): Promise<Conversation[]> {
      return asUser(actor, (tx) => listConversations(tx, LISTED_CONVERSATIONS));
    },

    /** A conversation of the caller's by its id, or by the name a v4 client gave it. */
    async get(actor: Actor, conversationId: string): Promise<{ id: string; title: string; messages: Message[] }> {
      return asUser(actor, async (tx) => {
        const conversation = await findConversation(tx, conversationIdOf(conversationId));
        if (!conversation) throw new NotFoundError('conversation');
        return { id: conversation.id, title: conversation.title, messages: await listMessages(tx, conversation.id) };
      });
    },

    /** Deletes a conversation (by id or v4 name) with its messages; an answer still in production stops. */
    async remove(actor: Actor, conversationId: string): Promise<void> {
      if (!(await asUser(actor, (tx) => deleteConversation(tx, conversationIdOf(conversationId))))) throw new NotFoundError('conversation');
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

    /** Whether a tenant's workflow can chat now, and why (see `runtimeOf`). */
    async workflowRuntime(tenantId: string, key: string): Promise<WorkflowRuntime> {
      return (await runtimeOf(tenantId, key)).runtime;
    },

    /** Every workflow the tenant configured. */
    listWorkflows: (tenantId: string) => configs.listWorkflows({ tenantId }),

    /** Answers this process is producing now. */
    producing: () => streams.producing(),
  };
}
