import { ValidationError } from '../errors.ts';
import { ChunkSchema, type ChunkInput } from './search.schema.ts';

const UNPAIRED_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text PostgreSQL can store (extracted text may hold anything): NUL characters dropped, unpaired surrogates replaced. */
function storableText(text: string): string {
  return text.replaceAll('\u0000', '').replace(UNPAIRED_SURROGATES, '\uFFFD');
}

function storableValue(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableValue);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, v]) => [storableText(key), storableValue(v)]));
  return value;
}

export function parseOrThrow<T>(schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } }, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw ValidationError.field(issue.path.map(String).join('.') || '(input)', issue.message);
}

/** The chunks as they are stored: each validated (400 naming the first bad field), its text and metadata storable. */
export function checkedChunks(chunks: ChunkInput[]) {
  if (!Array.isArray(chunks)) throw ValidationError.field('chunks', 'must be an array');
  return chunks.map((chunk) => {
    const parsed = parseOrThrow(ChunkSchema, chunk);
    return { content: storableText(parsed.content), metadata: storableValue(parsed.metadata) as Record<string, unknown> };
  });
}
