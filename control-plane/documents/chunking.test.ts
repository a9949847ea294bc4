import { encode } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import type { Segment } from '../extract/extractor.ts';
import { chunkSegments } from './chunking.ts';

const tokens = (text: string) => encode(text, { disallowedSpecial: new Set() }).length;
const sentence = (i: number) => `Sentence number ${i} talks about the quarterly turnover of the Lisbon office.`;

describe('chunkSegments', () => {
  it('keeps each chunk within the size, on one page, with the page for citations', () => {
    const segments: Segment[] = [
      { text: Array.from({ length: 40 }, (_, i) => sentence(i)).join(' '), position: { page: 1 } },
      { text: 'Appendix: turnover figures.', position: { page: 2 } },
    ];
    const chunks = chunkSegments(segments, { chunkSize: 100, chunkOverlap: 30 });
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) expect(tokens(chunk.content)).toBeLessThanOrEqual(100 + 2);
    expect(chunks.at(-1)).toEqual({ content: 'Appendix: turnover figures.', metadata: { pageNumber: 2 } });
    expect(chunks.slice(0, -1).every((c) => c.metadata.pageNumber === 1)).toBe(true);
    // Every sentence is in some chunk, and consecutive chunks of a page share their overlap.
    for (let i = 0; i < 40; i++) expect(chunks.some((c) => c.content.includes(sentence(i)))).toBe(true);
    const firstSentences = chunks[0]!.content.split(/(?<=\.) /);
    const secondSentences = chunks[1]!.content.split(/(?<=\.) /);
    const shared = firstSentences.filter((s) => secondSentences.includes(s));
    expect(shared.length).toBeGreaterThan(0);
    expect(shared).toEqual(firstSentences.slice(-shared.length));
    expect(tokens(shared.join(' '))).toBeLessThanOrEqual(30);
  });

  it('packs rows of a sheet together with their first and last row, never across sheets', () => {
    const rows: Segment[] = [
      ...Array.from({ length: 30 }, (_, i) => ({ text: `Order ${i}\tWidget\t${i * 3}`, position: { sheet: 'Orders', row: i + 2 } })),
      { text: 'Remember the audit', position: { sheet: 'Notes', row: 1 } },
    ];
    const chunks = chunkSegments(rows, { chunkSize: 120, chunkOverlap: 0 });
    expect(chunks[0]!.metadata).toMatchObject({ sheet: 'Orders', row: 2 });
    expect(chunks.at(-1)).toEqual({ content: 'Remember the audit', metadata: { sheet: 'Notes', row: 1, rowEnd: 1 } });
    const orders = chunks.filter((c) => c.metadata.sheet === 'Orders');
    expect(orders.map((c) => c.content).join('\n').split('\n')).toHaveLength(30);
    for (let i = 1; i < orders.length; i++) expect(orders[i]!.metadata.row).toBe((orders[i - 1]!.metadata.rowEnd as number) + 1);
  });

  it('cuts a sentence longer than the size into token windows and keeps sections apart', () => {
    const long = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
    const chunks = chunkSegments(
      [
        { text: long, position: { paragraph: 1, section: 'Scope' } },
        { text: 'Short closing words.', position: { paragraph: 2, section: 'Terms' } },
      ],
      { chunkSize: 100, chunkOverlap: 50 },
    );
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    for (const chunk of chunks) expect(tokens(chunk.content)).toBeLessThanOrEqual(100);
    expect(chunks.at(-1)!.metadata).toEqual({ paragraph: 2, paragraphEnd: 2, section: 'Terms' });
    expect(chunks.filter((c) => c.metadata.section === 'Scope').map((c) => c.content).join(' ')).toContain('word299');
  });

  it('is deterministic, and takes text holding special-token markers as text', () => {
    const segments: Segment[] = [{ text: 'Before <|endoftext|> after.', position: { paragraph: 1 } }];
    expect(chunkSegments(segments, { chunkSize: 800, chunkOverlap: 400 })).toEqual(chunkSegments(segments, { chunkSize: 800, chunkOverlap: 400 }));
    expect(chunkSegments(segments, { chunkSize: 800, chunkOverlap: 400 })[0]!.content).toBe('Before <|endoftext|> after.');
    expect(chunkSegments([], { chunkSize: 800, chunkOverlap: 400 })).toEqual([]);
  });
});
