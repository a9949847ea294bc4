import { extractText, getDocumentProxy } from 'unpdf';
import type { ExtractionLimits, SegmentCollector } from './extraction.ts';

/** Text per page, one segment per page with text (a scanned page without a text layer gives none). */
export async function readPdf(bytes: Uint8Array, collector: SegmentCollector, limits: ExtractionLimits): Promise<{ pages: number }> {
  // pdf.js takes ownership of the buffer it is given: hand it a copy.
  const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, isEvalSupported: false });
  try {
    const pages = pdf.numPages;
    let texts: string[];
    if (pages <= limits.maxPages) {
      texts = (await extractText(pdf, { mergePages: false })).text;
    } else {
      texts = [];
      for (let n = 1; n <= limits.maxPages; n++) texts.push(await pageText(pdf, n));
    }
    for (const [i, text] of texts.entries()) {
      if (!collector.add(text, { page: i + 1 })) break;
    }
    if (pages > limits.maxPages) collector.truncated = true;
    return { pages };
  } finally {
    await pdf.destroy();
  }
}

/**
 * Opens the PDF and walks its page tree to each page a reading would read (up to `maxPages`),
 * reading no page's content: a page tree that keeps the reader busy costs the same here, so the
 * caller's time limit stops it. A file pdf.js cannot open or walk passes: its reading says why.
 */
export async function checkPdf(bytes: Uint8Array, limits: ExtractionLimits): Promise<void> {
  let pdf: PdfDocument;
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, isEvalSupported: false });
  } catch {
    return;
  }
  try {
    const pages = Math.min(pdf.numPages, limits.maxPages);
    for (let n = 1; n <= pages; n++) await pdf.getPage(n);
  } catch {
    // A damaged page tree is not a limit passed: the reading reports it, as before.
  } finally {
    await pdf.destroy();
  }
}

type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>;

/** One page's text as unpdf's `extractText` joins it. */
async function pageText(pdf: PdfDocument, pageNumber: number): Promise<string> {
  const content = await (await pdf.getPage(pageNumber)).getTextContent();
  return content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : '')).join('');
}
