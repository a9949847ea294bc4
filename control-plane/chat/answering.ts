import type { ChatMessage, ChatModel, Citation, Completion, ContextPassage, Usage } from '../ai/model.ts';
import { ValidationError, NotFoundError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { ResourcesService } from '../resources/resources.service.ts';
import type { SearchService } from '../search/search.service.ts';
import type { ChatContext } from './chat.schema.ts';

/** What retrieval may search: the tenant's documents, its resources, or both. */
export type SourceKind = 'document' | 'resource';

export interface RetrievalQuery {
  query: string;
  kinds: SourceKind[];
  /** Only these document or resource types, when given. */
  types?: string[];
  limit: number;
}

/** Finds passages of the tenant's own sources for a question (the search service, hybrid). */
export type Retrieve = (actor: Actor, query: RetrievalQuery) => Promise<ContextPassage[]>;

/** The search query holds at most this many characters of the question. */
const QUERY_CHARS = 2000;

/**
 * Retrieval through the search service: hybrid search of the tenant's chunks of the kinds (and
 * types) asked for. A resource's hit is cited as `<type>/<id>`, a document's by its id.
 */
export function retrieveFromSearch(search: Pick<SearchService, 'search'>): Retrieve {
  return async (actor, query) => {
    const hits = await search.search(actor, { query: query.query.slice(0, QUERY_CHARS), mode: 'hybrid', limit: query.limit, kinds: query.kinds, types: query.types?.length ? query.types : undefined });
    return hits.map((hit) => ({
      source: hit.kind === 'resource' ? `${hit.sourceType}/${hit.sourceId}` : hit.sourceId,
      sourceType: hit.kind,
      text: hit.content,
      score: hit.score,
    }));
  };
}

/** Reads a document of the actor's tenant as passages; throws NotFoundError for one it does not have. */
export type ReadDocument = (actor: Actor, documentId: string) => Promise<ContextPassage[]>;

/** Which model answers: the local one, or the configured OpenAI-compatible endpoint (optionally another model there). */
export type ModelChoice = { provider: 'local' } | { provider: 'remote'; model?: string };

export interface AnswerRequest {
  question: string;
  /** Earlier turns of the conversation, oldest first. */
  history?: ChatMessage[];
  systemPrompt?: string;
  temperature: number;
  maxTokens: number;
  /** Passages the caller already has: named context, earlier workflow steps' output. */
  passages?: ContextPassage[];
  /** What retrieval searches, or false for none. */
  retrieval: Omit<RetrievalQuery, 'query'> | false;
  model?: ModelChoice;
  signal?: AbortSignal;
}

/** What an answer streams: progress, the text as it grows, the sources it used, then its usage (not an event of its own). */
export type AnswerEvent =
  | { type: 'status'; data: { status: 'searching' | 'answering'; message: string } }
  | { type: 'message'; data: { content: string; delta: string } }
  | { type: 'citation'; data: Citation }
  | { type: 'usage'; usage: Usage };

/** A resource's fields as sentences a model can quote: `name: Apollo. budget: 900.` */
export function resourcePassage(resource: { id: string; type: string; data: Record<string, unknown> }): ContextPassage {
  const facts = Object.entries(resource.data)
    .map(([key, value]) => `${key}: ${value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value)}.`)
    .join(' ');
  return { source: `${resource.type}/${resource.id}`, sourceType: 'resource', text: facts };
}

const sameSource = (a: ContextPassage, b: ContextPassage) => a.source === b.source && a.sourceType === b.sourceType;

export type AnsweringService = ReturnType<typeof createAnsweringService>;

/**
 * The one way the platform answers a question (v3 and v4 chat, the orchestrate `ai_chat` step):
 * the passages the caller names, plus what retrieval finds in the tenant's documents and
 * resources, are given to the model, whose answer streams with the sources it used. The same
 * request gives the same answer and citations whether it is streamed or collected.
 */
export function createAnsweringService(deps: {
  models: { local: ChatModel; remote?: ChatModel };
  resources: Pick<ResourcesService, 'get'>;
  retrieve: Retrieve;
  readDocument?: ReadDocument;
}) {
  function modelFor(choice: ModelChoice = deps.models.remote ? { provider: 'remote' } : { provider: 'local' }): ChatModel {
    if (choice.provider === 'local') return deps.models.local;
    if (!deps.models.remote) throw new Error('no OpenAI-compatible endpoint is configured (AI_BASE_URL, AI_API_KEY, AI_MODEL)');
    return deps.models.remote;
  }

  /**
   * The passages of the resources and documents a request names, each of which must be the
   * actor's tenant's: one it does not have is a 400 naming the entry, before anything streams.
   */
  async function contextPassages(actor: Actor, context: ChatContext, field = 'options.context'): Promise<ContextPassage[]> {
    const passages: ContextPassage[] = [];
    for (const [index, ref] of context.resources.entries()) {
      try {
        passages.push(resourcePassage(await deps.resources.get(actor, ref.type, ref.id)));
      } catch (error) {
        if (error instanceof NotFoundError) throw ValidationError.field(`${field}.resources.${index}`, `names no ${ref.type} resource of this tenant`);
        throw error;
      }
    }
    for (const [index, id] of context.documents.entries()) {
      const found = deps.readDocument ? await deps.readDocument(actor, id).catch((error: unknown) => (error instanceof NotFoundError ? undefined : Promise.reject(error))) : undefined;
      if (!found) throw ValidationError.field(`${field}.documents.${index}`, 'names no document of this tenant');
      passages.push(...found);
    }
    return passages;
  }

  async function* answer(actor: Actor, request: AnswerRequest): AsyncGenerator<AnswerEvent> {
    const model = modelFor(request.model);
    let passages = [...(request.passages ?? [])];
    if (request.retrieval && request.retrieval.kinds.length) {
      yield { type: 'status', data: { status: 'searching', message: 'Searching the tenant’s documents and resources' } };
      const found = await deps.retrieve(actor, { query: request.question, ...request.retrieval });
      passages = [...passages, ...found.filter((hit) => !passages.some((given) => sameSource(given, hit)))];
    }
    yield { type: 'status', data: { status: 'answering', message: passages.length ? `Answering from ${passages.length} passage(s)` : 'Answering without sources' } };
    const messages: ChatMessage[] = [
      ...(request.systemPrompt ? [{ role: 'system' as const, content: request.systemPrompt }] : []),
      ...(request.history ?? []),
      { role: 'user', content: request.question },
    ];
    let content = '';
    let citations: Citation[] = [];
    let usage: Usage | undefined;
    for await (const part of model.stream({
      messages,
      context: passages,
      temperature: request.temperature,
      maxTokens: request.maxTokens,
      model: request.model?.provider === 'remote' ? request.model.model : undefined,
      signal: request.signal,
    })) {
      if (part.type === 'delta') {
        if (!part.text) continue;
        content += part.text;
        yield { type: 'message', data: { content, delta: part.text } };
      } else if (part.type === 'citations') citations = part.citations;
      else usage = part.usage;
    }
    for (const citation of citations) yield { type: 'citation', data: citation };
    yield { type: 'usage', usage: usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 } };
  }

  return {
    contextPassages,
    answer,

    /** The whole answer at once (the orchestrate step): the same events, collected. */
    async complete(actor: Actor, request: AnswerRequest): Promise<Completion> {
      let text = '';
      const citations: Citation[] = [];
      let usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
      for await (const event of answer(actor, request)) {
        if (event.type === 'message') text = event.data.content;
        else if (event.type === 'citation') citations.push(event.data);
        else if (event.type === 'usage') usage = event.usage;
      }
      return { text, citations, usage };
    },

    /** Whether `choice` can run here (a remote provider needs the endpoint configured). */
    canRun: (choice: ModelChoice) => choice.provider === 'local' || !!deps.models.remote,
  };
}
