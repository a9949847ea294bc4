/**
 * The trained classifier as stored in `model.json`: one softmax model over categories, and per
 * category with subcategories one over its subcategories. `build-model.ts` writes it from the
 * training corpus; `classify.ts` reads it once at load.
 */
import { createHash } from 'node:crypto';
import { documentFeatures } from './features.ts';
import { type SoftmaxModel, type TrainOptions, trainSoftmax } from './model.ts';
import type { TrainingDocument } from './training-corpus.ts';

export interface ClassifierModel {
  /**
   * SHA-256 of what the model was trained on: the corpus, each document's features and the
   * training options. A test compares it with the current code's, to catch a stale `model.json`.
   */
  trainingSha256: string;
  trainingDocuments: number;
  category: SoftmaxModel;
  subcategories: Record<string, SoftmaxModel>;
}

/** A softmax model as `model.json` holds it: weights in hundredths, feature by feature, one per label. */
interface StoredSoftmaxModel {
  labels: string[];
  bias: number[];
  features: string[];
  weights: number[];
}

export interface StoredClassifierModel extends Omit<ClassifierModel, 'category' | 'subcategories'> {
  category: StoredSoftmaxModel;
  subcategories: Record<string, StoredSoftmaxModel>;
}

function store(model: SoftmaxModel): StoredSoftmaxModel {
  const features = Object.keys(model.weights).sort();
  return { labels: model.labels, bias: model.bias, features, weights: features.flatMap((feature) => model.weights[feature]!.map((w) => Math.round(w * 100))) };
}

function load(stored: StoredSoftmaxModel): SoftmaxModel {
  const K = stored.labels.length;
  if (stored.weights.length !== stored.features.length * K) throw new Error('classifier model: weights do not match features and labels');
  const weights: Record<string, number[]> = {};
  stored.features.forEach((feature, i) => {
    weights[feature] = stored.weights.slice(i * K, i * K + K).map((w) => w / 100);
  });
  return { labels: stored.labels, bias: stored.bias, weights };
}

export function storeClassifierModel(model: ClassifierModel): StoredClassifierModel {
  return { ...model, category: store(model.category), subcategories: Object.fromEntries(Object.entries(model.subcategories).map(([k, m]) => [k, store(m)])) };
}

export function loadClassifierModel(stored: StoredClassifierModel): ClassifierModel {
  return { ...stored, category: load(stored.category), subcategories: Object.fromEntries(Object.entries(stored.subcategories).map(([k, m]) => [k, load(m)])) };
}

export const CATEGORY_TRAINING: TrainOptions = { epochs: 12, learningRate: 0.5, l2: 1e-4, minDocumentFrequency: 3, maxFeatures: Number.POSITIVE_INFINITY, seed: 7, learnBias: false };
export const SUBCATEGORY_TRAINING: TrainOptions = { ...CATEGORY_TRAINING };

interface Featured {
  doc: TrainingDocument;
  features: Map<string, number>;
}

function digest(examples: readonly Featured[]): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify([CATEGORY_TRAINING, SUBCATEGORY_TRAINING]));
  for (const { doc, features } of examples) {
    hash.update(`${doc.category}\u0000${doc.subcategory ?? ''}\u0000${doc.text}\u0000`);
    for (const [feature, value] of [...features].sort(([a], [b]) => (a < b ? -1 : 1))) hash.update(`${feature}=${value.toFixed(9)}\u0000`);
  }
  return hash.digest('hex');
}

const withFeatures = (corpus: readonly TrainingDocument[]): Featured[] => corpus.map((doc) => ({ doc, features: documentFeatures(doc.text) }));

/** The digest a model built now from `corpus` would carry. */
export const trainingDigest = (corpus: readonly TrainingDocument[]): string => digest(withFeatures(corpus));

export function buildClassifierModel(corpus: readonly TrainingDocument[]): ClassifierModel {
  const examples = withFeatures(corpus);
  const category = trainSoftmax(
    examples.map(({ doc, features }) => ({ features, label: doc.category })),
    CATEGORY_TRAINING,
  );
  const subcategories: Record<string, SoftmaxModel> = {};
  for (const label of category.labels) {
    const own = examples.filter(({ doc }) => doc.category === label && doc.subcategory !== null);
    if (new Set(own.map(({ doc }) => doc.subcategory)).size < 2) continue;
    subcategories[label] = trainSoftmax(
      own.map(({ doc, features }) => ({ features, label: doc.subcategory! })),
      SUBCATEGORY_TRAINING,
    );
  }
  return { trainingSha256: digest(examples), trainingDocuments: corpus.length, category, subcategories };
}
