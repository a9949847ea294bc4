/**
 * Reading dates, amounts and currencies out of document text, the many ways documents write
 * them. Dates come out as ISO `YYYY-MM-DD`, amounts as numbers, currencies as ISO 4217 codes.
 */

const MONTH_INDEX: Record<string, number> = {
  jan: 1, january: 1, feb: 2, february: 2, mar: 3, march: 3, apr: 4, april: 4, may: 5, jun: 6, june: 6,
  jul: 7, july: 7, aug: 8, august: 8, sep: 9, sept: 9, september: 9, oct: 10, october: 10, nov: 11, november: 11, dec: 12, december: 12,
};
const MONTH = '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?';
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?';

export interface FoundDate {
  iso: string;
  /** Offset of the match in the searched text. */
  index: number;
  length: number;
}

const pad = (n: number) => String(n).padStart(2, '0');

export function isoFromParts(year: number, month: number, day: number): string | null {
  if (month < 1 || month > 12 || day < 1) return null;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth || year < 1900 || year > 2199) return null;
  return `${year}-${pad(month)}-${pad(day)}`;
}

const fullYear = (text: string) => {
  const year = Number(text);
  return text.length === 2 ? (year < 70 ? 2000 + year : 1900 + year) : year;
};

/** Date patterns, each with how its groups map to a date; `dayFirst` settles `03/04/2024`. */
const DATE_PATTERNS: { pattern: RegExp; parts: (m: RegExpExecArray, dayFirst: boolean) => string | null }[] = [
  { pattern: /\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b/gi, parts: (m) => isoFromParts(Number(m[1]), Number(m[2]), Number(m[3])) },
  {
    pattern: new RegExp(`\\b${MONTH}\\s+${DAY},?\\s+(\\d{4})\\b`, 'gi'),
    parts: (m) => isoFromParts(Number(m[3]), MONTH_INDEX[m[1]!.toLowerCase()]!, Number(m[2])),
  },
  {
    pattern: new RegExp(`\\b${DAY}(?:\\s+of)?[\\s-]+${MONTH},?[\\s-]+(\\d{4}|\\d{2})\\b`, 'gi'),
    parts: (m) => isoFromParts(fullYear(m[3]!), MONTH_INDEX[m[2]!.toLowerCase()]!, Number(m[1])),
  },
  {
    pattern: /\b(\d{1,2})\.(\d{1,2})\.(\d{4}|\d{2})\b/g,
    parts: (m) => isoFromParts(fullYear(m[3]!), Number(m[2]), Number(m[1])),
  },
  {
    pattern: /\b(\d{1,2})[/-](\d{1,2})[/-](\d{4}|\d{2})\b/g,
    parts: (m, dayFirst) => {
      const a = Number(m[1]);
      const b = Number(m[2]);
      const year = fullYear(m[3]!);
      if (a > 12) return isoFromParts(year, b, a);
      if (b > 12) return isoFromParts(year, a, b);
      return dayFirst ? isoFromParts(year, b, a) : isoFromParts(year, a, b);
    },
  },
];

/** Every date in `text`, in order of appearance; overlapping matches keep the earliest, longest one. */
export function findDates(text: string, dayFirst = true): FoundDate[] {
  const found: FoundDate[] = [];
  for (const { pattern, parts } of DATE_PATTERNS) {
    pattern.lastIndex = 0;
    for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
      const iso = parts(m, dayFirst);
      if (iso) found.push({ iso, index: m.index, length: m[0].length });
    }
  }
  found.sort((a, b) => a.index - b.index || b.length - a.length);
  const kept: FoundDate[] = [];
  for (const date of found) {
    const last = kept[kept.length - 1];
    if (last && date.index < last.index + last.length) continue;
    kept.push(date);
  }
  return kept;
}

export const firstDate = (text: string, dayFirst = true): string | null => findDates(text, dayFirst)[0]?.iso ?? null;

/** Currency codes the extractor recognises when written out. */
const CODES = ['USD', 'EUR', 'GBP', 'CHF', 'CAD', 'AUD', 'NZD', 'JPY', 'CNY', 'INR', 'SEK', 'NOK', 'DKK', 'PLN', 'CZK', 'HUF', 'SGD', 'HKD', 'ZAR', 'BRL', 'MXN', 'AED', 'KRW', 'TRY'];
/** Symbols, longest first, with the currency each means; a bare `$` is US dollars. */
const SYMBOLS: [string, string][] = [
  ['US$', 'USD'], ['CA$', 'CAD'], ['C$', 'CAD'], ['AU$', 'AUD'], ['A$', 'AUD'], ['NZ$', 'NZD'], ['S$', 'SGD'], ['HK$', 'HKD'], ['R$', 'BRL'],
  ['€', 'EUR'], ['£', 'GBP'], ['¥', 'JPY'], ['₹', 'INR'], ['₩', 'KRW'], ['$', 'USD'],
];
const CODE_PATTERN = new RegExp(`\\b(${CODES.join('|')})\\b`);
const SYMBOL_PATTERN = new RegExp(SYMBOLS.map(([s]) => s.replace(/\$/g, '\\$')).join('|'));

/** The currency a piece of text names, by code first, else by symbol. */
export function currencyIn(text: string): string | null {
  const code = CODE_PATTERN.exec(text);
  if (code) return code[1]!;
  const symbol = SYMBOL_PATTERN.exec(text);
  return symbol ? SYMBOLS.find(([s]) => s === symbol[0])![1] : null;
}

/** The currency most often named in a document, by code or symbol; the first named wins a tie. */
export function dominantCurrency(text: string): string | null {
  const counts = new Map<string, number>();
  const pattern = new RegExp(`${CODE_PATTERN.source}|${SYMBOL_PATTERN.source}`, 'g');
  for (const m of text.matchAll(pattern)) {
    const currency = m[1] ?? SYMBOLS.find(([s]) => s === m[0])![1];
    counts.set(currency, (counts.get(currency) ?? 0) + 1);
  }
  let best: string | null = null;
  for (const [currency, count] of counts) if (best === null || count > counts.get(best)!) best = currency;
  return best;
}

/**
 * A number as documents write amounts: `1,234.56`, `1.234,56`, `1 234,56`, `1'234.50`, `-12`,
 * `(12.00)` (negative). The last `.` or `,` followed by one or two digits is the decimal mark.
 */
export function parseAmount(raw: string): number | null {
  let text = raw.trim();
  let negative = false;
  if (/^\(.*\)$/.test(text)) {
    negative = true;
    text = text.slice(1, -1);
  }
  if (/^[-−–]/.test(text)) {
    negative = true;
    text = text.slice(1);
  }
  text = text.replace(/[\s\u00a0']/g, '');
  if (!/^\d[\d.,]*$/.test(text)) return null;
  const decimal = /[.,](\d{1,2})$/.exec(text);
  let whole = text;
  let fraction = '';
  if (decimal) {
    whole = text.slice(0, decimal.index);
    fraction = decimal[1]!;
  }
  whole = whole.replace(/[.,]/g, '');
  const value = Number(`${whole}${fraction ? `.${fraction}` : ''}`);
  if (!Number.isFinite(value)) return null;
  return negative ? -value : value;
}

export interface FoundAmount {
  value: number;
  currency: string | null;
  index: number;
}

const NUMBER = "\\(?[-−–]?\\d{1,3}(?:(?:[,.'\\u00a0]| (?=\\d{3}\\b))\\d{3})*(?:[.,]\\d{1,2})?\\)?|\\(?[-−–]?\\d+(?:[.,]\\d{1,2})?\\)?";
const CURRENCY_MARK = `(?:${CODES.join('|')}|${SYMBOLS.map(([s]) => s.replace(/\$/g, '\\$')).join('|')})`;
const AMOUNT_PATTERN = new RegExp(`([-−–]?)(${CURRENCY_MARK})?\\s?(${NUMBER})\\s?(${CURRENCY_MARK})?`, 'g');

/** Amounts on a line (a line holds few), with the currency written beside each when there is one. */
export function findAmounts(line: string): FoundAmount[] {
  const found: FoundAmount[] = [];
  AMOUNT_PATTERN.lastIndex = 0;
  for (let m = AMOUNT_PATTERN.exec(line); m; m = AMOUNT_PATTERN.exec(line)) {
    if (m[0].trim() === '') {
      AMOUNT_PATTERN.lastIndex++;
      continue;
    }
    const value = parseAmount(`${m[1] ?? ''}${m[3]!}`);
    if (value === null) continue;
    const mark = m[2] ?? m[4];
    found.push({ value, currency: mark ? currencyIn(mark) : null, index: m.index });
  }
  return found;
}
