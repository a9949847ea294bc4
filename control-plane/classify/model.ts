/**
 * A multinomial logistic (softmax) model over sparse features: training by seeded stochastic
 * gradient descent (AdaGrad steps, L2 penalty, labels weighted to count equally), prediction as
 * class probabilities. Pure and
 * deterministic: the same examples and options give the same weights.
 */
import { seededRandom } from './random.ts';

/** Weights kept sparse: a feature absent from `weights` weighs 0 for every label. */
export interface SoftmaxModel {
  labels: string[];
  bias: number[];
  /** Feature name to one weight per label, in the order of `labels`. */
  weights: Record<string, number[]>;
}

export interface Example {
  features: ReadonlyMap<string, number>;
  label: string;
}

export interface TrainOptions {
  epochs: number;
  learningRate: number;
  /** L2 penalty per example step. */
  l2: number;
  /** Features seen in fewer training documents are not learnt. */
  minDocumentFrequency: number;
  /** Only this many features are stored: those with the largest absolute weight for some label. */
  maxFeatures: number;
  seed: number;
  /** Learn a prior per label; without it, a text of unknown words leans to no label. */
  learnBias: boolean;
}

/** Class probabilities, in the order of `model.labels`. */
export function predictProbabilities(model: SoftmaxModel, features: ReadonlyMap<string, number>): number[] {
  const scores = [...model.bias];
  for (const [feature, value] of features) {
    const weights = model.weights[feature];
    if (!weights) continue;
    for (let k = 0; k < scores.length; k++) scores[k]! += weights[k]! * value;
  }
  return softmax(scores);
}

function softmax(scores: number[]): number[] {
  const max = Math.max(...scores);
  const exps = scores.map((score) => Math.exp(score - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

const round = (value: number) => Math.round(value * 100) / 100;

/** Trains a softmax model; labels are sorted so the result does not depend on example order. */
export function trainSoftmax(examples: readonly Example[], options: TrainOptions): SoftmaxModel {
  const labels = [...new Set(examples.map((example) => example.label))].sort();
  const documentFrequency = new Map<string, number>();
  for (const example of examples) for (const feature of example.features.keys()) documentFrequency.set(feature, (documentFrequency.get(feature) ?? 0) + 1);
  const vocabulary = [...documentFrequency].filter(([, df]) => df >= options.minDocumentFrequency).map(([feature]) => feature).sort();
  const index = new Map(vocabulary.map((feature, i) => [feature, i]));
  const rows = examples.map((example) => {
    const ids: number[] = [];
    const values: number[] = [];
    for (const [feature, value] of example.features) {
      const id = index.get(feature);
      if (id === undefined) continue;
      ids.push(id);
      values.push(value);
    }
    return { ids, values, target: labels.indexOf(example.label) };
  });
  // Each label weighs the same in total, however many examples it has.
  const perLabel = labels.map((label) => examples.filter((example) => example.label === label).length);
  const classWeight = perLabel.map((count) => examples.length / (labels.length * count));

  const K = labels.length;
  const weights = new Float64Array(vocabulary.length * K);
  const squaredGradients = new Float64Array(vocabulary.length * K).fill(1e-8);
  const bias = new Float64Array(K);
  const biasSquaredGradients = new Float64Array(K).fill(1e-8);
  const random = seededRandom(options.seed);
  const order = rows.map((_, i) => i);

  for (let epoch = 0; epoch < options.epochs; epoch++) {
    for (const i of random.shuffle(order)) {
      const row = rows[i]!;
      const scores = Array.from(bias);
      for (let j = 0; j < row.ids.length; j++) {
        const base = row.ids[j]! * K;
        for (let k = 0; k < K; k++) scores[k]! += weights[base + k]! * row.values[j]!;
      }
      const probabilities = softmax(scores);
      for (let k = 0; k < K; k++) {
        const error = (probabilities[k]! - (k === row.target ? 1 : 0)) * classWeight[row.target]!;
        if (options.learnBias) {
          biasSquaredGradients[k]! += error * error;
          bias[k]! -= (options.learningRate * error) / Math.sqrt(biasSquaredGradients[k]!);
        }
        for (let j = 0; j < row.ids.length; j++) {
          const at = row.ids[j]! * K + k;
          const gradient = error * row.values[j]! + options.l2 * weights[at]!;
          squaredGradients[at]! += gradient * gradient;
          weights[at]! -= (options.learningRate * gradient) / Math.sqrt(squaredGradients[at]!);
        }
      }
    }
  }

  const ranked = vocabulary.map((feature, id) => {
    const row = Array.from(weights.subarray(id * K, id * K + K)).map(round);
    return { feature, row, strength: Math.max(...row.map(Math.abs)) };
  });
  ranked.sort((a, b) => b.strength - a.strength || (a.feature < b.feature ? -1 : 1));
  const kept = ranked.slice(0, options.maxFeatures).sort((a, b) => (a.feature < b.feature ? -1 : 1));
  return { labels, bias: Array.from(bias).map(round), weights: Object.fromEntries(kept.map(({ feature, row }) => [feature, row])) };
}
