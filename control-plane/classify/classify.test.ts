import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyDocument, type Classification, DOCUMENT_CATEGORIES } from './classify.ts';
import { trainingDigest } from './classifier-model.ts';
import { FIELD_READERS } from './fields.ts';
import { type EvaluationLabel, evaluationSet, holdoutSet } from './fixtures/make-fixtures.ts';
import { trainingCorpus } from './training-corpus.ts';

const FIXTURES = new URL('./fixtures/', import.meta.url);

interface Measured {
  label: EvaluationLabel;
  text: string;
  result: Classification;
}

/** A labelled set as committed: `folder/` holds the texts, `labelsFile` their labels. */
function loadSet(folder: string, labelsFile: string): Measured[] {
  const labels: EvaluationLabel[] = JSON.parse(readFileSync(new URL(labelsFile, FIXTURES), 'utf8'));
  return labels.map((label) => {
    const text = readFileSync(new URL(`${folder}/${label.file}`, FIXTURES), 'utf8');
    return { label, text, result: classifyDocument({ text, contentType: label.contentType, filename: label.filename }) };
  });
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
/** Of the fields a document states, how many came out exactly. */
const fieldHits = (expected: Record<string, unknown>, got: Record<string, unknown>) => Object.entries(expected).filter(([key, value]) => same(got[key], value)).length;
const share = (hits: number, total: number) => (total === 0 ? 1 : hits / total);
const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
const readers = FIELD_READERS as Record<string, ((text: string) => Record<string, unknown>) | undefined>;

/** Accuracy of the category, the subcategory and the fields over a set, printed as a table. */
function measure(name: string, set: readonly Measured[]) {
  const rows = DOCUMENT_CATEGORIES.map((category) => {
    const own = set.filter(({ label }) => label.category === category);
    const predicted = set.filter(({ result }) => result.category === category);
    const withSub = own.filter(({ label, result }) => label.subcategory !== null && result.category === category);
    const reader = readers[category];
    return {
      category,
      documents: own.length,
      recall: share(own.filter(({ result }) => result.category === category).length, own.length),
      precision: share(predicted.filter(({ label }) => label.category === category).length, predicted.length),
      subcategory: withSub.length ? share(withSub.filter(({ label, result }) => result.subcategory === label.subcategory).length, withSub.length) : null,
      fieldsTotal: own.reduce((n, { label }) => n + Object.keys(label.fields).length, 0),
      fieldsEndToEnd: own.reduce((n, { label, result }) => n + fieldHits(label.fields, result.extractedData), 0),
      fieldsGivenCategory: own.reduce((n, { label, text, result }) => n + fieldHits(label.fields, reader ? reader(text) : result.extractedData), 0),
    };
  });
  const accuracy = share(set.filter(({ label, result }) => label.category === result.category).length, set.length);
  const subLabelled = set.filter(({ label, result }) => label.subcategory !== null && result.category === label.category);
  const subcategoryAccuracy = share(subLabelled.filter(({ label, result }) => label.subcategory === result.subcategory).length, subLabelled.length);
  const fieldsTotal = rows.reduce((n, row) => n + row.fieldsTotal, 0);
  const fieldAccuracy = share(rows.reduce((n, row) => n + row.fieldsEndToEnd, 0), fieldsTotal);
  const fieldAccuracyGivenCategory = share(rows.reduce((n, row) => n + row.fieldsGivenCategory, 0), fieldsTotal);
  const misses = set.filter(({ label, result }) => label.category !== result.category).map(({ label, result }) => `${label.file} -> ${result.category} (${result.confidence})`);
  console.log(
    [
      `${name}: classification accuracy ${percent(accuracy)} on ${set.length} documents; subcategory ${percent(subcategoryAccuracy)} (of ${subLabelled.length} rightly categorised with one); fields ${percent(fieldAccuracy)} end to end, ${percent(fieldAccuracyGivenCategory)} given the category (${fieldsTotal} fields)`,
      'category     docs  recall  precision  subcategory  fields end to end / given the category',
      ...rows.map((r) =>
        [r.category.padEnd(12), String(r.documents).padStart(4), percent(r.recall).padStart(7), percent(r.precision).padStart(10), (r.subcategory === null ? '-' : percent(r.subcategory)).padStart(12), `  ${r.fieldsEndToEnd}/${r.fieldsTotal} / ${r.fieldsGivenCategory}/${r.fieldsTotal}`].join(' '),
      ),
      `misclassified: ${misses.join(', ') || 'none'}`,
    ].join('\n'),
  );
  return { rows, accuracy, subcategoryAccuracy, fieldAccuracy, fieldAccuracyGivenCategory };
}

const evaluation = loadSet('eval', 'labels.json');
const holdout = loadSet('holdout', 'holdout-labels.json');

describe('classification on the labelled evaluation set', () => {
  it('holds at least 60 documents, at least 6 per category, apart from the training corpus', () => {
    expect(evaluation.length).toBeGreaterThanOrEqual(60);
    for (const category of DOCUMENT_CATEGORIES) expect(evaluation.filter(({ label }) => label.category === category).length, category).toBeGreaterThanOrEqual(6);
    const trainingLines = new Set(trainingCorpus().flatMap((doc) => doc.text.split('\n').map((line) => line.trim())));
    const shared = [...evaluation, ...holdout].flatMap(({ text }) => text.split('\n').map((line) => line.trim())).filter((line) => line.length >= 25 && /\p{L}{3}/u.test(line) && trainingLines.has(line));
    expect(shared).toEqual([]);
  });

  it('is the set the fixture script writes', () => {
    expect(evaluationSet().map(({ label, text }) => ({ label, text: `${text}\n` }))).toEqual(evaluation.map(({ label, text }) => ({ label, text })));
    expect(holdoutSet().map(({ label, text }) => ({ label, text: `${text}\n` }))).toEqual(holdout.map(({ label, text }) => ({ label, text })));
  });

  it('finds the category, the subcategory and the fields, and prints how well', () => {
    const figures = measure('evaluation set', evaluation);
    expect(figures.accuracy).toBeGreaterThanOrEqual(0.9);
    expect(figures.subcategoryAccuracy).toBeGreaterThanOrEqual(0.9);
    expect(figures.fieldAccuracy).toBeGreaterThanOrEqual(0.9);
    expect(figures.fieldAccuracyGivenCategory).toBeGreaterThanOrEqual(0.95);
    for (const row of figures.rows) expect(row.recall, row.category).toBeGreaterThanOrEqual(0.7);
  });

  it('extracts every stated field of the first two documents of each category', () => {
    for (const category of DOCUMENT_CATEGORIES) {
      for (const { label, result } of evaluation.filter((c) => c.label.category === category).slice(0, 2)) {
        expect({ file: label.file, category: result.category, fields: result.extractedData }).toMatchObject({ file: label.file, category, fields: label.fields });
      }
    }
  });

  it('gives ISO dates, numeric totals and ISO 4217 currencies wherever it finds them', () => {
    for (const { result } of [...evaluation, ...holdout]) {
      for (const [key, value] of Object.entries(result.extractedData)) {
        if (/date$/i.test(key)) expect(value, key).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        if (key === 'total' || key === 'rowCount') expect(typeof value, key).toBe('number');
        if (key === 'currency') expect(value).toMatch(/^[A-Z]{3}$/);
        if (key === 'period') expect(value).toEqual({ start: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), end: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
        if (key === 'term') expect(value).toMatch(/^P\d+[DWMY]$/);
      }
    }
  });
});

describe('classification on the holdout set (never tuned on)', () => {
  it('prints how well it does on documents from templates written after the design was settled', () => {
    const figures = measure('holdout set', holdout);
    expect(figures.accuracy).toBeGreaterThanOrEqual(0.8);
    expect(figures.fieldAccuracy).toBeGreaterThanOrEqual(0.75);
  });
});

describe('the committed model', () => {
  it('was built from the current training corpus, features and options (else rerun build-model.ts)', () => {
    const stored = JSON.parse(readFileSync(new URL('./model.json', import.meta.url), 'utf8'));
    expect(stored.trainingSha256).toBe(trainingDigest(trainingCorpus()));
  });
});

describe('format hints', () => {
  const invoiceText = 'INVOICE\nInvoice No: 4411\nDate: 2024-02-01\nBill To: Someone Ltd\nConsulting services 2 x 500.00\nTotal Due: $1,000.00\nPayment terms: Net 30';

  it('takes a CSV or workbook for a spreadsheet, whatever its rows say', () => {
    const csv = classifyDocument({ text: 'Invoice,Total\n4411,1000.00\n4412,250.00', contentType: 'text/csv' });
    expect(csv).toMatchObject({ category: 'spreadsheet', subcategory: 'financial', extractedData: { columns: ['Invoice', 'Total'], rowCount: 2 } });
    expect(csv.confidence).toBeGreaterThan(0.9);
    const workbook = classifyDocument({ text: 'Name\tEmail\nAda\tada@example.org', contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' });
    expect(workbook).toMatchObject({ category: 'spreadsheet', subcategory: 'contacts', extractedData: { columns: ['Name', 'Email'], rowCount: 1 } });
    expect(classifyDocument({ text: 'a,b\n1,2', filename: 'data.CSV' }).category).toBe('spreadsheet');
  });

  it('keeps quoted cells whole when reading the header', () => {
    expect(classifyDocument({ text: '"Name, full",City\n"Doe, Jane",Oslo', contentType: 'text/csv' }).extractedData).toEqual({ columns: ['Name, full', 'City'], rowCount: 1 });
  });

  it('takes an image with little or no OCR text for an image, and a photographed document by its text', () => {
    expect(classifyDocument({ text: '', contentType: 'image/png' })).toEqual({ category: 'image', subcategory: null, confidence: 0.98, extractedData: { wordCount: 0 } });
    expect(classifyDocument({ text: 'STOP', contentType: 'image/jpeg' })).toMatchObject({ category: 'image', extractedData: { wordCount: 1, text: 'STOP' } });
    expect(classifyDocument({ text: '', filename: 'IMG_0001.JPG' }).category).toBe('image');
    expect(classifyDocument({ text: invoiceText, contentType: 'image/png' }).category).toBe('invoice');
  });

  it('trusts the media type over the name', () => {
    expect(classifyDocument({ text: invoiceText, filename: 'scan.png', contentType: 'application/pdf' }).category).toBe('invoice');
    expect(classifyDocument({ text: invoiceText, filename: 'export.csv', contentType: 'text/plain' }).category).toBe('invoice');
  });

  it('calls an empty text other', () => {
    expect(classifyDocument({ text: '' })).toEqual({ category: 'other', subcategory: null, confidence: 0.5, extractedData: {} });
    expect(classifyDocument({ text: ' \n\t ' }).category).toBe('other');
  });

  it('reads only the head of a very long text and still answers', () => {
    const long = `${invoiceText}\n${'Consulting services 1 x 10.00\n'.repeat(20_000)}`;
    expect(long.length).toBeGreaterThan(500_000);
    expect(classifyDocument({ text: long })).toMatchObject({ category: 'invoice', extractedData: { invoiceNumber: '4411', total: 1000, currency: 'USD' } });
  });
});

describe('classifyDocument on any input', () => {
  it('answers on long lines made to trip regular expressions up', () => {
    const texts = ['1,'.repeat(50_000), `term ${'1.'.repeat(50_000)}`, '12 34 56 78 '.repeat(20_000), `This Agreement is between ${'between Acme '.repeat(8_000)}`, `Dear ${'a '.repeat(50_000)}`, `x${' '.repeat(100_000)}y`];
    for (const text of texts) {
      expect(DOCUMENT_CATEGORIES).toContain(classifyDocument({ text }).category);
      for (const read of Object.values(readers)) expect(typeof read!(text)).toBe('object');
    }
  });

  const valid = (c: Classification) => {
    expect(DOCUMENT_CATEGORIES).toContain(c.category);
    expect(c.subcategory === null || typeof c.subcategory === 'string').toBe(true);
    expect(c.confidence).toBeGreaterThanOrEqual(0);
    expect(c.confidence).toBeLessThanOrEqual(1);
    expect(typeof c.extractedData).toBe('object');
  };

  it('returns a valid classification, the same one every time', () => {
    const line = fc.oneof(fc.string({ maxLength: 80 }), fc.constantFrom('Total: $12.50', 'Dear Sir,', 'Invoice No: 7', '2024-01-31', 'Skills: Go, SQL', 'between A Ltd and B Inc.', 'a,b,c', '€ 1.234,56'));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), fc.option(fc.constantFrom('text/csv', 'image/png', 'application/pdf', 'text/plain', '')), (lines, contentType) => {
        const input = { text: lines.join('\n'), contentType: contentType ?? undefined };
        const first = classifyDocument(input);
        valid(first);
        expect(classifyDocument(input)).toEqual(first);
      }),
      { numRuns: 200, seed: 17 },
    );
  });
});
