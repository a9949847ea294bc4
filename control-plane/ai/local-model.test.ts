import { describe, expect, it } from 'vitest';
import { createLocalModel } from './local-model.ts';
import { collectCompletion } from './model.ts';
import { countTokens } from './tokens.ts';

const context = [
  { source: 'handbook.pdf', sourceType: 'document' as const, text: 'Vacation requests need two weeks notice. Expenses are reimbursed monthly.' },
  { source: 'faq.txt', sourceType: 'document' as const, text: 'The office opens at 9am. Parking is free for employees.' },
];

describe('local model', () => {
  const model = createLocalModel();

  it('answers from the sentences that match the question and cites their source', async () => {
    const answer = await model.complete({ messages: [{ role: 'user', content: 'How much notice do vacation requests need?' }], context });
    expect(answer.text).toBe('Vacation requests need two weeks notice.');
    expect(answer.citations).toEqual([{ source: 'handbook.pdf', sourceType: 'document', content: 'Vacation requests need two weeks notice.', confidence: 1 }]);
    expect(answer.usage.totalTokens).toBe(answer.usage.promptTokens + answer.usage.completionTokens);
  });

  it('is deterministic, respects maxTokens, and says when nothing matches', async () => {
    const request = { messages: [{ role: 'user' as const, content: 'When does the office open and is parking free?' }], context };
    expect(await model.complete(request)).toEqual(await model.complete(request));
    const short = await model.complete({ ...request, maxTokens: 3 });
    expect(countTokens(short.text)).toBe(3);
    expect(short.usage.completionTokens).toBe(3);
    const none = await model.complete({ messages: [{ role: 'user', content: 'quantum chromodynamics' }], context });
    expect(none.text).toContain('do not answer');
    expect(none.citations).toEqual([]);
  });

  it('counts tokens with the o200k encoding, not words', async () => {
    const answer = await model.complete({ messages: [{ role: 'user', content: 'How much notice do vacation requests need?' }], context });
    // "Vacation requests need two weeks notice." is 7 tokens: a word each and the full stop.
    expect(answer.usage.completionTokens).toBe(7);
    expect(answer.usage.promptTokens).toBe(countTokens('How much notice do vacation requests need?') + countTokens(context.map((c) => c.text).join('\n')));
  });

  it('streams the same answer a word at a time, then its sources and usage', async () => {
    const request = { messages: [{ role: 'user' as const, content: 'When does the office open and is parking free?' }], context };
    const parts = [];
    for await (const part of model.stream(request)) parts.push(part);
    const deltas = parts.filter((p) => p.type === 'delta');
    expect(deltas.length).toBeGreaterThan(3);
    expect(parts.at(-2)?.type).toBe('citations');
    expect(parts.at(-1)?.type).toBe('usage');
    expect(await collectCompletion(model.stream(request))).toEqual(await model.complete(request));
  });
});
