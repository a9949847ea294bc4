import { createRequire } from 'node:module';

type Tokenizer = typeof import('gpt-tokenizer');

let loaded: Tokenizer | undefined;

/**
 * The o200k byte-pair tokenizer (`gpt-tokenizer`), loaded on first use: its tables take about
 * 70 MiB, which a process that never counts or chunks text (most control-plane instances between
 * chats and document indexing, every edge) should not carry.
 */
export function bpe(): Tokenizer {
  loaded ??= createRequire(import.meta.url)('gpt-tokenizer') as Tokenizer;
  return loaded;
}
