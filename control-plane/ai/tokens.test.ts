import { countTokens as exactCount } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { countTokens, truncateToTokens } from './tokens.ts';

describe('token counting', () => {
  it('counts ordinary text exactly as the o200k encoding does', () => {
    const text = 'The quick brown fox.\n\n It costs $1,200 (approx).  Hello   world, naïve café 東京.';
    expect(countTokens(text)).toBe(exactCount(text));
    expect(countTokens('')).toBe(0);
  });

  it('counts text naming a special token as plain text', () => {
    expect(countTokens('a <|endoftext|> b')).toBeGreaterThan(3);
  });

  it('counts a very long run without spaces in slices, so one request cannot stall the process', () => {
    // 50 letters of one kind are 6-7 tokens; what matters is that this returns at all.
    expect(countTokens('x'.repeat(200_000))).toBeGreaterThan(10_000);
  });

  it('truncates between words to at most the given tokens', () => {
    const text = 'Vacation requests need two weeks notice.';
    expect(truncateToTokens(text, 3)).toBe('Vacation requests need');
    expect(truncateToTokens(text, 100)).toBe(text);
    expect(countTokens(truncateToTokens('Supercalifragilisticexpialidocious', 2))).toBeLessThanOrEqual(2);
  });
});
