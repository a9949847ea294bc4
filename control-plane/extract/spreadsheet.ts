import * as XLSX from '@e965/xlsx';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import type { ExtractionLimits, SegmentCollector } from './extraction.ts';

/** Cells of a row, as the sheet shows them, apart by tabs; empty cells left out. */
const rowText = (cells: readonly string[]) => cells.map((c) => c.trim()).filter(Boolean).join('\t');

/** Stops after `maxRows` rows over all sheets, marking the extraction truncated. */
class RowBudget {
  private left: number;
  constructor(
    maxRows: number,
    private readonly collector: SegmentCollector,
  ) {
    this.left = maxRows;
  }

  /** Adds a row's text; `false` when no more rows are to be read. */
  add(cells: readonly string[], sheet: string, row: number): boolean {
    const text = rowText(cells);
    if (!text) return !this.collector.full;
    if (this.left === 0) {
      this.collector.truncated = true;
      return false;
    }
    this.left -= 1;
    return this.collector.add(text, { sheet, row });
  }
}

function cellText(cell: ExcelJS.Cell): string {
  const value = cell.value;
  if (value instanceof Date) return value.toISOString().replace(/T00:00:00\.000Z$/, '').replace(/\.000Z$/, 'Z');
  return cell.text ?? '';
}

/** An XLSX workbook's rows, sheet by sheet, each with its sheet name and row number. */
export async function readXlsx(bytes: Uint8Array, collector: SegmentCollector, limits: ExtractionLimits): Promise<void> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) as unknown as ExcelJS.Buffer);
  const budget = new RowBudget(limits.maxRows, collector);
  for (const sheet of workbook.worksheets) {
    for (let r = 1; r <= sheet.rowCount; r++) {
      const row = sheet.findRow(r);
      if (!row) continue;
      const cells: string[] = [];
      row.eachCell({ includeEmpty: false }, (cell) => cells.push(cellText(cell)));
      if (!budget.add(cells, sheet.name, r)) return;
    }
  }
}

/**
 * An Excel 97-2003 workbook's rows (SheetJS), as `readXlsx` gives them. Read in dense mode and
 * walked over the cells present, never over the sheet's declared range, which may claim every row
 * and column a sheet can have.
 */
export function readXls(bytes: Uint8Array, collector: SegmentCollector, limits: ExtractionLimits): void {
  const workbook = XLSX.read(bytes, { type: 'array', dense: true, sheetRows: limits.maxRows + 1, cellFormula: false, cellHTML: false, cellStyles: false });
  const budget = new RowBudget(limits.maxRows, collector);
  for (const name of workbook.SheetNames) {
    const rows = workbook.Sheets[name]?.['!data'] ?? [];
    for (const [r, row] of rows.entries()) {
      if (!row) continue;
      const cells: string[] = [];
      row.forEach((cell) => {
        if (cell?.v !== undefined) cells.push(cell.w ?? String(cell.v));
      });
      if (!budget.add(cells, name, r + 1)) return;
    }
  }
}

/** The delimiter of the header line: the most frequent of comma, semicolon and tab outside quotes. */
function guessDelimiter(text: string, filename: string): string {
  if (/\.tsv$/i.test(filename)) return '\t';
  const firstLine = (text.split('\n', 1)[0] ?? '').replace(/"[^"]*"/g, '');
  const counts = [',', ';', '\t'].map((d) => [d, firstLine.split(d).length - 1] as const);
  return counts.reduce((best, next) => (next[1] > best[1] ? next : best))[0];
}

/** A CSV (or TSV) file's records, in sheet `csv`, numbered from 1 (the header is row 1). */
export function readCsv(text: string, filename: string, collector: SegmentCollector, limits: ExtractionLimits): void {
  const records: string[][] = parse(text, {
    delimiter: guessDelimiter(text, filename),
    relax_column_count: true,
    relax_quotes: false,
    skip_empty_lines: true,
    to: limits.maxRows + 1,
  });
  const budget = new RowBudget(limits.maxRows, collector);
  for (const [i, record] of records.entries()) {
    if (!budget.add(record, 'csv', i + 1)) return;
  }
}
