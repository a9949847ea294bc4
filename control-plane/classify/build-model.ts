/**
 * Rebuilds `model.json` from the training corpus: `npx tsx control-plane/classify/build-model.ts`.
 * Deterministic: the corpus and the training are seeded, so an unchanged corpus gives the same file.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildClassifierModel, storeClassifierModel } from './classifier-model.ts';
import { trainingCorpus } from './training-corpus.ts';

const model = buildClassifierModel(trainingCorpus());
const path = fileURLToPath(new URL('./model.json', import.meta.url));
writeFileSync(path, `${JSON.stringify(storeClassifierModel(model))}\n`);
const features = Object.keys(model.category.weights).length;
console.error(`wrote ${path}: ${model.trainingDocuments} training documents, ${features} category features, subcategories for ${Object.keys(model.subcategories).join(', ')}`);
