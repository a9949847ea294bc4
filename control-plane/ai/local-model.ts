import { collectCompletion, type ChatModel, type Citation, type Completion, type CompletionRequest, type ContextPassage, type ModelPart } from './model.ts';
import { countTokens, truncateToTokens } from './tokens.ts';

const STOP_WORDS = new Set(
  'a an and are as at be by can do does for from has have how i in is it its me my of on or our so than that the their them then there these they this to was we what when where which who why will with you your'.split(' '),
);

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
const terms = (text: string) => words(text).filter((w) => w.length > 1 && !STOP_WORDS.has(w));

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

interface ScoredSentence {
  passage: ContextPassage;
  sentence: string;
  score: number;
  order: number;
}

/**
 * A local, deterministic, offline model that answers from the retrieved text it is given: it
 * ranks the context's sentences by how many of the question's terms they share (rarer terms
 * weigh more) and answers with the best ones, citing their sources. Without matching context it
 * says so. The same request always gets the same answer; tokens are counted with the o200k
 * encoding (`gpt-tokenizer`), and the answer is streamed a word at a time.
 */
export function createLocalModel(): ChatModel {
  function answer(request: CompletionRequest): Completion {
    const question = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const maxTokens = Math.max(1, request.maxTokens ?? 256);
    const asked = new Set(terms(question));
    const passages = request.context ?? [];

    const documentFrequency = new Map<string, number>();
    const candidates: ScoredSentence[] = [];
    for (const passage of passages) {
      for (const sentence of sentences(passage.text)) {
        const present = new Set(terms(sentence));
        for (const term of present) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
        candidates.push({ passage, sentence, score: 0, order: candidates.length });
      }
    }
    for (const candidate of candidates) {
      for (const term of new Set(terms(candidate.sentence))) {
        if (asked.has(term)) candidate.score += 1 + Math.log(candidates.length / (documentFrequency.get(term) ?? 1));
      }
    }
    const best = candidates.filter((c) => c.score > 0).sort((a, b) => b.score - a.score || a.order - b.order);

    let text: string;
    const used: ScoredSentence[] = [];
    if (best.length === 0) {
      text = passages.length
        ? `The provided sources do not answer "${question.trim()}".`
        : `No sources were provided to answer "${question.trim()}".`;
    } else {
      let budget = maxTokens;
      for (const candidate of best) {
        const size = countTokens(candidate.sentence);
        if (used.length > 0 && size > budget) break;
        used.push(candidate);
        budget -= size;
        if (budget <= 0) break;
      }
      text = used
        .sort((a, b) => a.order - b.order)
        .map((c) => c.sentence)
        .join(' ');
    }
    text = truncateToTokens(text, maxTokens);

    const topScore = best[0]?.score ?? 1;
    const citations: Citation[] = [];
    for (const candidate of used) {
      if (citations.some((c) => c.source === candidate.passage.source)) continue;
      citations.push({
        source: candidate.passage.source,
        sourceType: candidate.passage.sourceType,
        content: candidate.sentence,
        confidence: Math.round(Math.min(1, candidate.score / topScore) * 100) / 100,
      });
    }
    const promptTokens = countTokens(request.messages.map((m) => m.content).join('\n')) + countTokens(passages.map((p) => p.text).join('\n'));
    const completionTokens = countTokens(text);
    return { text, citations, usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens } };
  }

  async function* stream(request: CompletionRequest): AsyncGenerator<ModelPart> {
    const { text, citations, usage } = answer(request);
    for (const word of text.match(/\s*\S+/g) ?? []) {
      request.signal?.throwIfAborted();
      yield { type: 'delta', text: word };
    }
    yield { type: 'citations', citations };
    yield { type: 'usage', usage };
  }

  return {
    name: 'local-extractive-v1',
    stream,
    complete: (request) => collectCompletion(stream(request)),
  };
}
