import type { ChatStreamItem } from '../../control-plane/contracts.ts';
import { toErrorResponse } from '../errors.ts';
import { sseResponse } from '../plugins/sse.ts';

/**
 * A chat stream as server-sent events: the first item (the conversation's and the answer's ids,
 * sent as `X-Conversation-Id` and `X-Message-Id`) is awaited first, so that a refusal (400, 403,
 * 404, 429) is a JSON answer before any stream starts; then each event is `id: n` and
 * `data: {"type", "data"}`. `end` (v4: `data: [DONE]`) follows the last event.
 */
export async function chatEventStream(items: AsyncIterable<ChatStreamItem>, options: { heartbeatMs?: number; end?: string } = {}): Promise<Response> {
  const iterator = items[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done || !('started' in first.value)) throw new Error('the chat stream did not start with its ids');
  const { conversationId, messageId } = first.value.started;
  const frames: AsyncIterator<{ id: number; data: string }> = {
    async next() {
      const next = await iterator.next();
      if (next.done) return { done: true, value: undefined };
      if (!('event' in next.value)) return this.next();
      return { done: false, value: { id: next.value.id, data: JSON.stringify(next.value.event) } };
    },
    async return() {
      await iterator.return?.();
      return { done: true, value: undefined };
    },
  };
  return sseResponse(frames, {
    headers: { 'x-conversation-id': conversationId, 'x-message-id': messageId },
    heartbeatMs: options.heartbeatMs,
    end: options.end,
    // The control plane went away midway (over the HTTP link): the client gets an error event, then the end.
    failure: (error) => ({ data: JSON.stringify({ type: 'error', data: { code: toErrorResponse(error).body.error.code, message: 'the stream was interrupted; resume it from the last event id' } }) }),
  });
}
