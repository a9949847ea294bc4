/**
 * Document classification: a category, a subcategory where one fits, a confidence and the fields
 * read from the text. The format decides first (a spreadsheet is a spreadsheet; an image with
 * little text is an image); otherwise a softmax model over the text's words and layout
 * (`model.json`, built by `build-model.ts`) picks the category and then the subcategory, and the
 * category's field reader (`fields.ts`) extracts its fields. Pure, synchronous, deterministic.
 */
import { readFileSync } from 'node:fs';
import { loadClassifierModel } from './classifier-model.ts';
import { documentFeatures, tabularShare } from './features.ts';
import { FIELD_READERS, spreadsheetFields } from './fields.ts';
import { predictProbabilities, type SoftmaxModel } from './model.ts';

export type DocumentCategory = 'invoice' | 'receipt' | 'contract' | 'report' | 'letter' | 'resume' | 'spreadsheet' | 'image' | 'other';

export const DOCUMENT_CATEGORIES: readonly DocumentCategory[] = ['invoice', 'receipt', 'contract', 'report', 'letter', 'resume', 'spreadsheet', 'image', 'other'];

export interface ClassificationInput {
  /** The document's extracted text (OCR text for an image). */
  text: string;
  filename?: string;
  /** The media type the content was recognised as, such as `text/csv` or `image/png`. */
  contentType?: string;
}

export interface Classification {
  category: DocumentCategory;
  subcategory: string | null;
  /** How sure the classifier is of the category, 0..1. */
  confidence: number;
  extractedData: Record<string, unknown>;
}

/** Text read for the model and the fields: the head of a long document says what it is. */
export const CLASSIFIED_TEXT_LIMIT = 100_000;
/** An image whose OCR text has fewer words than this is a picture, not a scanned document. */
export const IMAGE_TEXT_WORDS = 12;

const SPREADSHEET_TYPES = /^(?:text\/csv|text\/tab-separated-values|application\/vnd\.ms-excel|application\/vnd\.openxmlformats-officedocument\.spreadsheetml\.|application\/vnd\.oasis\.opendocument\.spreadsheet)/i;
const SPREADSHEET_NAMES = /\.(?:csv|tsv|xlsx|xlsm|xls|ods)$/i;
const IMAGE_NAMES = /\.(?:png|jpe?g|gif|webp|tiff?|bmp|heic)$/i;

const MODEL = loadClassifierModel(JSON.parse(readFileSync(new URL('./model.json', import.meta.url), 'utf8')));

function best(model: SoftmaxModel, probabilities: readonly number[]): { label: string; probability: number } {
  let at = 0;
  for (let k = 1; k < probabilities.length; k++) if (probabilities[k]! > probabilities[at]!) at = k;
  return { label: model.labels[at]!, probability: probabilities[at]! };
}

const round = (value: number) => Math.round(value * 1000) / 1000;
const wordCount = (text: string) => text.match(/\p{L}{2,}/gu)?.length ?? 0;

/** Spreadsheets by what their columns hold. */
function spreadsheetKind(columns: readonly unknown[]): string | null {
  const header = columns.join(' ').toLowerCase();
  if (/e-?mail|phone|mobile|contact/.test(header)) return 'contacts';
  if (/\bsku\b|stock|inventory|warehouse|reorder|\bqty\b|quantity on hand|\bbin\b/.test(header)) return 'inventory';
  if (/amount|revenue|price|cost|debit|credit|balance|total|sales|expense|budget|invoice|payment|salary|profit/.test(header)) return 'financial';
  return null;
}

function spreadsheet(text: string, confidence: number): Classification {
  const extractedData = spreadsheetFields(text);
  return { category: 'spreadsheet', subcategory: spreadsheetKind(extractedData.columns as unknown[]), confidence, extractedData };
}

/**
 * Classifies a document from its extracted text and, when known, its name and media type. The
 * media type is trusted over the name. Never throws; an empty text is `other` (or `image`).
 */
export function classifyDocument(input: ClassificationInput): Classification {
  const text = input.text ?? '';
  const head = text.length > CLASSIFIED_TEXT_LIMIT ? text.slice(0, CLASSIFIED_TEXT_LIMIT) : text;
  const contentType = input.contentType?.toLowerCase().trim() ?? '';
  const filename = input.filename ?? '';
  const isSpreadsheet = contentType ? SPREADSHEET_TYPES.test(contentType) : SPREADSHEET_NAMES.test(filename);
  const isImage = contentType ? contentType.startsWith('image/') : IMAGE_NAMES.test(filename);

  if (isSpreadsheet) {
    const lines = head.split(/\r?\n/).filter((line) => line.trim());
    return spreadsheet(text, tabularShare(lines) >= 0.6 || lines.length <= 1 ? 0.99 : 0.9);
  }
  const words = wordCount(head);
  if (isImage && words < IMAGE_TEXT_WORDS) {
    return { category: 'image', subcategory: null, confidence: words === 0 ? 0.98 : round(0.95 - words * 0.02), extractedData: { wordCount: words, ...(words > 0 ? { text: head.trim().slice(0, 200) } : {}) } };
  }
  if (words === 0 && !/\d/.test(head)) return { category: 'other', subcategory: null, confidence: 0.5, extractedData: {} };

  const features = documentFeatures(head);
  const probabilities = predictProbabilities(MODEL.category, features);
  const { label, probability } = best(MODEL.category, probabilities);
  const category = label as DocumentCategory;
  const confidence = round(probability);
  if (category === 'spreadsheet') return spreadsheet(text, confidence);

  const subcategoryModel = MODEL.subcategories[category];
  const subcategory = subcategoryModel ? best(subcategoryModel, predictProbabilities(subcategoryModel, features)).label : null;
  const reader = (FIELD_READERS as Partial<Record<DocumentCategory, (text: string) => Record<string, unknown>>>)[category];
  return { category, subcategory, confidence, extractedData: reader ? reader(head) : {} };
}
