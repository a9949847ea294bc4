/** The platform's AI model interface: every model (local or remote) answers through it. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Retrieved text the answer may draw on; citations point back to it. */
export interface ContextPassage {
  source: string;
  sourceType: 'document' | 'resource' | 'step';
  text: string;
  /** How well retrieval matched it, 0..1; absent for passages named by the caller. */
  score?: number;
}

export interface CompletionRequest {
  messages: ChatMessage[];
  context?: ContextPassage[];
  /** 0..1; the local model ignores it (it is deterministic). */
  temperature?: number;
  /** Upper bound on answer length, in tokens. */
  maxTokens?: number;
  /** A remote model's name, when it is not the configured default (an AI profile's `model`). */
  model?: string;
  /** Stops the model (the answer was abandoned). */
  signal?: AbortSignal;
}

export interface Citation {
  source: string;
  sourceType: ContextPassage['sourceType'];
  content: string;
  confidence: number;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface Completion {
  text: string;
  citations: Citation[];
  usage: Usage;
}

/**
 * What a model streams: pieces of the answer as they come, then (once) the sources it used when
 * it knows them, and its token usage. A model that cannot tell its sources yields no `citations`.
 */
export type ModelPart = { type: 'delta'; text: string } | { type: 'citations'; citations: Citation[] } | { type: 'usage'; usage: Usage };

export interface ChatModel {
  readonly name: string;
  /** The answer as it is produced; throws {@link ModelError} when the model fails, also midway. */
  stream(request: CompletionRequest): AsyncIterable<ModelPart>;
  complete(request: CompletionRequest): Promise<Completion>;
}

/** A model that failed: `RATE_LIMIT_EXCEEDED` when it refused for load (with `retryAfter` seconds), else `BAD_GATEWAY`. */
export class ModelError extends Error {
  constructor(
    readonly code: 'BAD_GATEWAY' | 'RATE_LIMIT_EXCEEDED',
    message: string,
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

/** The whole answer of a streaming model: its text, sources and usage. */
export async function collectCompletion(parts: AsyncIterable<ModelPart>): Promise<Completion> {
  let text = '';
  let citations: Citation[] = [];
  let usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  for await (const part of parts) {
    if (part.type === 'delta') text += part.text;
    else if (part.type === 'citations') citations = part.citations;
    else usage = part.usage;
  }
  return { text, citations, usage };
}
