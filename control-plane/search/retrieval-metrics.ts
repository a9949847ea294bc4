/** Relevance judgments: per query id, the graded relevance of each judged corpus id (0 = not relevant). */
export type Judgments = Map<string, Map<string, number>>;

/**
 * nDCG@k with graded gains (2^rel - 1, as trec_eval and BEIR compute it) of one ranked list
 * against one query's judgments; 0 when the query has no relevant document.
 */
export function ndcgAt(k: number, ranked: readonly string[], relevance: ReadonlyMap<string, number>): number {
  const gain = (rel: number) => 2 ** rel - 1;
  const discount = (i: number) => 1 / Math.log2(i + 2);
  const dcg = ranked.slice(0, k).reduce((sum, id, i) => sum + gain(relevance.get(id) ?? 0) * discount(i), 0);
  const ideal = [...relevance.values()]
    .filter((rel) => rel > 0)
    .sort((a, b) => b - a)
    .slice(0, k)
    .reduce((sum, rel, i) => sum + gain(rel) * discount(i), 0);
  return ideal === 0 ? 0 : dcg / ideal;
}

/** The share of a query's relevant documents found in the first k; 0 when it has none. */
export function recallAt(k: number, ranked: readonly string[], relevance: ReadonlyMap<string, number>): number {
  const relevant = [...relevance].filter(([, rel]) => rel > 0).map(([id]) => id);
  if (relevant.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return relevant.filter((id) => top.has(id)).length / relevant.length;
}

/** Mean nDCG@k and recall@k over every judged query; a query missing from `runs` counts as an empty ranking. */
export function evaluateRuns(k: number, runs: ReadonlyMap<string, readonly string[]>, judgments: Judgments): { ndcg: number; recall: number; queries: number } {
  let ndcg = 0;
  let recall = 0;
  for (const [queryId, relevance] of judgments) {
    const ranked = runs.get(queryId) ?? [];
    ndcg += ndcgAt(k, ranked, relevance);
    recall += recallAt(k, ranked, relevance);
  }
  const queries = judgments.size;
  return { ndcg: queries ? ndcg / queries : 0, recall: queries ? recall / queries : 0, queries };
}

/** Parses BEIR's qrels TSV (`query-id`, `corpus-id`, `score`, with a header line). */
export function parseQrels(text: string): Judgments {
  const judgments: Judgments = new Map();
  for (const line of text.split('\n').slice(1)) {
    const [queryId, corpusId, score] = line.trim().split('\t');
    if (!queryId || !corpusId || score === undefined) continue;
    const relevance = judgments.get(queryId) ?? new Map<string, number>();
    relevance.set(corpusId, Number(score));
    judgments.set(queryId, relevance);
  }
  return judgments;
}
