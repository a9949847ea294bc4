import { randomUUID } from 'node:crypto';
import { secondsToNextUtcDay } from '../capabilities/daily-limit.ts';
import type { Decision } from '../capabilities/capabilities.schema.ts';
import type { Db } from '../db/client.ts';
import { ConflictError, DomainError, NotFoundError, RateLimitError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { asUser, type AnswerScope } from './answer-scope.ts';
import type { AnswerStreams } from './answer-streams.ts';
import type { AnsweringService } from './answering.ts';
import { conversationHistory, countLiveStreams, countMessageToday, findConversation, insertConversation, insertMessage, insertStream, lockTenantStreams, touchConversation } from './chat.repo.ts';
import { DEFAULT_CONCURRENT_STREAMS, type WorkflowChatAnswer } from './chat.schema.ts';
import type { AnswerSpec } from './workflow-answers.ts';


/** Earlier turns given to the model with a new question. */
const HISTORY_TURNS = 20;
const TITLE_CHARS = 80;

function titleOf(message: string): string {
  const line = message.replace(/\s+/g, ' ').trim();
  if (line.length <= TITLE_CHARS) return line;
  const cut = line.slice(0, TITLE_CHARS - 1);
  return `${cut.slice(0, cut.lastIndexOf(' ') > 40 ? cut.lastIndexOf(' ') : cut.length)}…`;
}

/** The concurrent answer streams the tenant's `ai.chat` decision allows. */
export const streamLimit = (decision: Decision) => decision.limits.maxConcurrentStreams ?? DEFAULT_CONCURRENT_STREAMS;

/**
 * Answers started for every chat route: the question and an answer in production recorded
 * within the tenant's limits, the answer produced in the background, and collected whole when the
 * caller wants it so.
 */
export function createAnswerStarts(deps: { db: Db; answering: Pick<AnsweringService, 'answer'>; streams: Pick<AnswerStreams, 'produce' | 'follow'>; leaseMs: number }) {
  const { db, answering, streams, leaseMs } = deps;
  /**
   * Records the question and an answer in production (refusing with 429 when the tenant's streams
   * or daily messages are spent), then produces the answer in the background.
   */
  async function start(actor: Actor, spec: AnswerSpec, decision: Decision): Promise<AnswerScope> {
    const { conversationId, messageId, history } = await asUser(db, actor, async (tx) => {
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

  return { start, collect };
}
