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
}

export interface CompletionRequest {
  messages: ChatMessage[];
  context?: ContextPassage[];
  /** 0..1; the local model ignores it (it is deterministic). */
  temperature?: number;
  /** Upper bound on answer length, in tokens (whitespace-separated words for the local model). */
  maxTokens?: number;
}

export interface Citation {
  source: string;
  sourceType: ContextPassage['sourceType'];
  content: string;
  confidence: number;
}

export interface Completion {
  text: string;
  citations: Citation[];
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
}

export interface ChatModel {
  readonly name: string;
  complete(request: CompletionRequest): Promise<Completion>;
}
