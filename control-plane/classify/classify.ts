/** Document classification: a category, an optional subcategory, a confidence and the fields read from the text. */

export type DocumentCategory = 'invoice' | 'receipt' | 'contract' | 'report' | 'letter' | 'resume' | 'spreadsheet' | 'image' | 'other';

export interface ClassificationInput {
  text: string;
  filename?: string;
  contentType?: string;
}

export interface Classification {
  category: DocumentCategory;
  subcategory: string | null;
  /** 0..1 */
  confidence: number;
  extractedData: Record<string, unknown>;
}

const KEYWORDS: Array<[DocumentCategory, RegExp]> = [
  ['invoice', /\binvoice\b/i],
  ['receipt', /\breceipt\b/i],
  ['contract', /\bagreement\b|\bcontract\b/i],
  ['resume', /\bresume\b|\bcurriculum vitae\b/i],
  ['report', /\breport\b/i],
  ['letter', /\bdear\b/i],
];

/** Classifies a document from its extracted text and, when known, its name and media type. Synchronous and deterministic. */
export function classifyDocument(input: ClassificationInput): Classification {
  const contentType = input.contentType?.toLowerCase() ?? '';
  if (/csv|spreadsheet|excel/.test(contentType)) return { category: 'spreadsheet', subcategory: null, confidence: 0.9, extractedData: {} };
  if (contentType.startsWith('image/') && input.text.trim().length < 40) return { category: 'image', subcategory: null, confidence: 0.9, extractedData: {} };
  const match = KEYWORDS.find(([, pattern]) => pattern.test(input.text));
  return match ? { category: match[0], subcategory: null, confidence: 0.5, extractedData: {} } : { category: 'other', subcategory: null, confidence: 0.3, extractedData: {} };
}
