import { createParser } from 'eventsource-parser';
import { CliError } from '../errors.ts';
import type { ApiClient } from './api-client.ts';

/** The stage `chat send` and `chat stream` talk to unless told otherwise. */
export { DEFAULT_STAGE } from './chat.constants.ts';

export interface ChatRequest {
  tenantId: string;
  workflow: string;
  stage: string;
  message: string;
  conversationId: string;
  params: Record<string, string | number | boolean | null>;
}

export interface Citation {
  source: string;
  sourceType: string;
  content: string;
  confidence: number;
}

/** The platform's answer to one chat message. */
export interface ChatAnswer {
  answer: string;
  citations: Citation[];
  /** The conversation, as the request named it. */
  conversation_id: string;
  /** Deprecated: the same value as `conversation_id`. */
  conversationId: string;
  messageId: string;
  workflowId: string;
  stage: string;
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
}

/** One event of a streamed answer, as the platform sends it: `{type, data}`. */
export type ChatEvent =
  | { type: 'status'; data: { status: string; message: string } }
  | { type: 'citation'; data: Citation }
  | { type: 'message'; data: { content: string; delta: string } }
  | { type: 'error'; data: { code: string; message: string } }
  | { type: 'done'; data: { conversationId: string; messageId: string; usage?: ChatAnswer['usage'] } };

const seg = encodeURIComponent;
const path = (prefix: string, r: ChatRequest) => `${prefix}/${seg(r.tenantId)}/${seg(r.workflow)}/${seg(r.stage)}`;
const body = (r: ChatRequest) => ({ message: r.message, conversation_id: r.conversationId, params: r.params });
const subject = (r: ChatRequest) => `Workflow ${r.workflow} stage ${r.stage}`;

/** The literal line that ends a v4 chat stream. */
const DONE = '[DONE]';

/**
 * Chat with a workflow's stage over v4: one answer as JSON (`send`), or the answer's events as
 * they arrive (`stream`), read until `data: [DONE]`. The conversation is the one the caller names.
 */
export function createChatService(api: ApiClient) {
  return {
    async send(request: ChatRequest): Promise<ChatAnswer> {
      return (await api.request<ChatAnswer>('POST', path('/v4/ai/chat', request), { body: body(request), subject: subject(request) })).body;
    },

    /**
     * Calls `onEvent` for each event as it arrives and resolves at `data: [DONE]` (the connection is
     * then closed, whatever the server does next). A refusal before the stream starts is the
     * client's error of its status; a stream that ends without `[DONE]` is E203.
     */
    async stream(request: ChatRequest, onEvent: (event: ChatEvent) => void): Promise<{ conversationId: string; messageId?: string }> {
      const controller = new AbortController();
      const response = await api.request<ReadableStream<Uint8Array>>('POST', path('/v4/ai/chat/stream', request), {
        body: body(request),
        subject: subject(request),
        headers: { accept: 'text/event-stream' },
        response: 'stream',
        signal: controller.signal,
      });
      let done = false;
      let malformed: string | undefined;
      const parser = createParser({
        onEvent: (message) => {
          if (done) return;
          if (message.data === DONE) {
            done = true;
            return;
          }
          try {
            onEvent(JSON.parse(message.data) as ChatEvent);
          } catch (error) {
            if (error instanceof SyntaxError) malformed = message.data.slice(0, 200);
            else throw error;
          }
        },
      });
      const decoder = new TextDecoder();
      const reader = response.body.getReader();
      try {
        while (!done) {
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await reader.read();
          } catch (error) {
            throw new CliError('E203', { details: `the chat stream broke off: ${(error as Error).message}` }, { cause: error });
          }
          if (chunk.done) break;
          parser.feed(decoder.decode(chunk.value, { stream: true }));
          if (malformed !== undefined) throw new CliError('E203', { details: `the chat stream sent an event that is not JSON: ${malformed}` });
        }
      } finally {
        controller.abort();
        reader.releaseLock();
      }
      if (!done) throw new CliError('E203', { details: 'the chat stream ended before data: [DONE]' });
      return { conversationId: response.headers['x-conversation-id'] ?? request.conversationId, messageId: response.headers['x-message-id'] };
    },
  };
}
