import { bpe } from './bpe.ts';

/** Text that names a special token (`<|endoftext|>`) is counted as the text it is. */
const PLAIN = { disallowedSpecial: new Set<string>() };

/**
 * Runs of non-space characters longer than this are counted in slices: byte-pair encoding is
 * quadratic in the length of one piece (200 000 letters without a space took 40 s), so a single
 * long run could stall the process. Ordinary text is counted exactly.
 */
const LONG_RUN = /(\S{101,})/;
const SLICE = 50;

/** Tokens of `text` in the o200k encoding (`gpt-tokenizer`), the unit of `maxTokens` and of `usage`. */
export function countTokens(text: string): number {
  if (!text) return 0;
  let total = 0;
  text.split(LONG_RUN).forEach((part, index) => {
    if (index % 2 === 0) total += bpe().countTokens(part, PLAIN);
    else for (let at = 0; at < part.length; at += SLICE) total += bpe().countTokens(part.slice(at, at + SLICE), PLAIN);
  });
  return total;
}

/** The longest start of `text` (cut between words where it can) that holds at most `maxTokens` tokens. */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return '';
  if (countTokens(text) <= maxTokens) return text;
  let kept = '';
  let used = 0;
  for (const piece of text.match(/\s*\S+/g) ?? []) {
    const size = countTokens(piece);
    if (used + size <= maxTokens) {
      kept += piece;
      used += size;
      continue;
    }
    // A piece longer than what is left: keep as many of its tokens as fit, when no word was kept yet.
    if (!kept && piece.length <= 4 * SLICE) kept = bpe().decode(bpe().encode(piece, PLAIN).slice(0, maxTokens - used));
    break;
  }
  return kept.trim() || text.trim().slice(0, maxTokens);
}
