/**
 * Hybrid fusion: a weighted sum of the two modes' own 0..1 scores, `w·fulltext + (1-w)·vector`,
 * where fulltext is BM25 over its query bound and vector the cosine similarity (below 0 as 0).
 * A candidate found by one mode is scored by the other too (its exact BM25 or similarity, 0 when
 * it has no term of the query), so fusion never guesses a missing score. The result stays on the
 * 0..1 scale, so `minScore` means the same in every mode.
 */
export interface FusionWeights {
  /** w: the weight of full text; vectors get 1 - w. */
  fulltext: number;
}

/**
 * w = 0.7, tuned on SciFact's train judgments with the offline sentence encoder
 * (docs/benchmarks.md, `npm run bench:retrieval`): full text carries a scientific corpus, vectors break ties and
 * bring the paraphrases.
 */
export const DEFAULT_FUSION: FusionWeights = { fulltext: 0.7 };

/** Vector similarity on the 0..1 scale: cosine, negatives as 0. */
export function vectorScore(similarity: number): number {
  return Math.min(1, Math.max(0, similarity));
}

export function fuse(fulltext: ReadonlyMap<string, number>, vector: ReadonlyMap<string, number>, weights: FusionWeights): { chunkId: string; score: number }[] {
  const ids = new Set([...fulltext.keys(), ...vector.keys()]);
  const w = weights.fulltext;
  return [...ids]
    .map((chunkId) => ({ chunkId, score: w * (fulltext.get(chunkId) ?? 0) + (1 - w) * vectorScore(vector.get(chunkId) ?? 0) }))
    .sort((a, b) => b.score - a.score || Number(a.chunkId) - Number(b.chunkId));
}
