import { bpe } from '../ai/bpe.ts';
import type { Segment, SegmentPosition } from '../extract/extractor.ts';

/** A chunk as the search index takes it: its text and where it came from, for citations. */
export interface DocumentChunk {
  content: string;
  metadata: Record<string, unknown>;
}

export interface ChunkingOptions {
  /** Tokens per chunk at most. */
  chunkSize: number;
  /** Tokens a chunk repeats from the end of the one before (whole sentences or rows), at most half the size. */
  chunkOverlap: number;
}

/** Text is tokenised as text: a document holding `<|endoftext|>` is not refused. */
const tokens = (text: string) => bpe().encode(text, { disallowedSpecial: new Set() });

interface Unit {
  text: string;
  tokens: number;
  position: SegmentPosition;
  /** The segment it comes from: pieces of one segment join with a space. */
  segment: number;
}

/** Where a chunk may not reach across: a page, a sheet, a section. */
function groupOf(position: SegmentPosition): string {
  if ('page' in position) return `page:${position.page}`;
  if ('sheet' in position) return `sheet:${position.sheet}`;
  return `section:${position.section ?? ''}`;
}

const sentences = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * A segment as pieces of at most `size` tokens: whole when it fits, else its sentences, and a
 * sentence longer than `size` cut into token windows.
 */
function unitsOf(segment: Segment, index: number, size: number): Unit[] {
  const count = tokens(segment.text).length;
  if (count <= size) return [{ text: segment.text, tokens: count, position: segment.position, segment: index }];
  const units: Unit[] = [];
  for (const { segment: sentence } of sentences.segment(segment.text)) {
    const text = sentence.trim();
    if (!text) continue;
    const encoded = tokens(text);
    if (encoded.length <= size) {
      units.push({ text, tokens: encoded.length, position: segment.position, segment: index });
      continue;
    }
    for (let at = 0; at < encoded.length; at += size) {
      const window = encoded.slice(at, at + size);
      units.push({ text: bpe().decode(window).trim(), tokens: window.length, position: segment.position, segment: index });
    }
  }
  return units.filter((unit) => unit.text);
}

/** Citation positions of a chunk made of `units`: `pageNumber`; `sheet`, `row`, `rowEnd`; `paragraph`, `paragraphEnd`, `section`. */
function metadataOf(units: Unit[]): Record<string, unknown> {
  const first = units[0]!.position;
  const last = units[units.length - 1]!.position;
  if ('page' in first) return { pageNumber: first.page };
  if ('sheet' in first) return { sheet: first.sheet, row: first.row, rowEnd: 'row' in last ? last.row : first.row };
  return { paragraph: first.paragraph, paragraphEnd: 'paragraph' in last ? last.paragraph : first.paragraph, ...(first.section ? { section: first.section } : {}) };
}

/**
 * Packs a document's segments into chunks of at most `chunkSize` tokens, in document order. A
 * chunk holds whole segments (paragraphs, rows, pages) or, for a long one, whole sentences; it
 * never reaches across a page, a sheet or a section, so that its citation position is exact. Each
 * chunk after the first of its page, sheet or section begins with the last units of the one
 * before, up to `chunkOverlap` tokens. Deterministic: the same segments give the same chunks.
 */
export function chunkSegments(segments: readonly Segment[], options: ChunkingOptions): DocumentChunk[] {
  const chunks: DocumentChunk[] = [];
  /** Rows a line apart, paragraphs and pages a blank line apart, pieces of one segment a space. */
  const join = (units: Unit[]) =>
    units.map((unit, i) => (i === 0 ? '' : unit.segment === units[i - 1]!.segment ? ' ' : 'sheet' in unit.position ? '\n' : '\n\n') + unit.text).join('');
  let current: Unit[] = [];
  let currentTokens = 0;
  let currentGroup: string | undefined;
  /** Whether `current` holds a unit not yet in an emitted chunk. */
  let fresh = false;

  const emit = () => {
    if (fresh && current.length) chunks.push({ content: join(current), metadata: metadataOf(current) });
    fresh = false;
  };
  /** The tail of `current` kept to begin the next chunk: whole units, up to the overlap, never all of it. */
  const overlapTail = (): Unit[] => {
    const tail: Unit[] = [];
    let total = 0;
    for (let i = current.length - 1; i > 0; i--) {
      if (total + current[i]!.tokens > options.chunkOverlap) break;
      total += current[i]!.tokens;
      tail.unshift(current[i]!);
    }
    return tail;
  };

  for (const [index, segment] of segments.entries()) {
    const group = groupOf(segment.position);
    for (const unit of unitsOf(segment, index, options.chunkSize)) {
      if (group !== currentGroup) {
        emit();
        current = [];
        currentTokens = 0;
        currentGroup = group;
      } else if (currentTokens + unit.tokens > options.chunkSize) {
        emit();
        current = overlapTail();
        currentTokens = current.reduce((sum, u) => sum + u.tokens, 0);
        while (current.length && currentTokens + unit.tokens > options.chunkSize) currentTokens -= current.shift()!.tokens;
      }
      current.push(unit);
      currentTokens += unit.tokens;
      fresh = true;
    }
  }
  emit();
  return chunks;
}
