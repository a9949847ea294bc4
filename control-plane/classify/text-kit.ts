/**
 * Building blocks shared by the document generators: dates and amounts written the many ways
 * documents write them, and a noise pass that imitates OCR and copy-paste damage. Each generator
 * brings its own names, wording and layouts.
 */
import type { Random } from './random.ts';

export const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** A calendar date; months 1..12. */
export interface DateParts {
  year: number;
  month: number;
  day: number;
}

const pad = (n: number) => String(n).padStart(2, '0');

export const isoDate = (d: DateParts) => `${d.year}-${pad(d.month)}-${pad(d.day)}`;

export function randomDate(random: Random, fromYear = 2019, toYear = 2025): DateParts {
  return { year: random.int(fromYear, toYear), month: random.int(1, 12), day: random.int(1, 28) };
}

export function addDays(d: DateParts, days: number): DateParts {
  const date = new Date(Date.UTC(d.year, d.month - 1, d.day + days));
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

/**
 * Ways of writing a date that read the same everywhere: ISO, month names, day-first with dots.
 * Slash forms are ambiguous and are chosen by the generators themselves with the currency that
 * tells them apart (month first with dollars).
 */
export type DateStyle = 'iso' | 'long' | 'longDayFirst' | 'short' | 'shortDayFirst' | 'dotted' | 'slashDayFirst' | 'slashMonthFirst' | 'dashed';

export function formatDate(d: DateParts, style: DateStyle): string {
  const name = MONTHS[d.month - 1]!;
  switch (style) {
    case 'iso':
      return isoDate(d);
    case 'long':
      return `${name} ${d.day}, ${d.year}`;
    case 'longDayFirst':
      return `${d.day} ${name} ${d.year}`;
    case 'short':
      return `${name.slice(0, 3)} ${d.day}, ${d.year}`;
    case 'shortDayFirst':
      return `${pad(d.day)} ${name.slice(0, 3)} ${d.year}`;
    case 'dotted':
      return `${pad(d.day)}.${pad(d.month)}.${d.year}`;
    case 'slashDayFirst':
      return `${pad(d.day)}/${pad(d.month)}/${d.year}`;
    case 'slashMonthFirst':
      return `${pad(d.month)}/${pad(d.day)}/${d.year}`;
    case 'dashed':
      return `${pad(d.day)}-${name.slice(0, 3)}-${d.year}`;
  }
}

/** The date styles a document in this currency may use: slashes follow the currency's habit. */
export function dateStylesFor(currency: string): DateStyle[] {
  const unambiguous: DateStyle[] = ['iso', 'long', 'longDayFirst', 'short', 'shortDayFirst', 'dashed'];
  if (currency === 'USD') return [...unambiguous, 'slashMonthFirst'];
  if (currency === 'EUR' || currency === 'CHF') return [...unambiguous, 'dotted', 'slashDayFirst'];
  return [...unambiguous, 'slashDayFirst'];
}

const SYMBOLS: Record<string, string> = { USD: '$', EUR: '€', GBP: '£', JPY: '¥', INR: '₹' };

const grouped = (whole: number, separator: string) => String(whole).replace(/\B(?=(\d{3})+(?!\d))/g, separator);

/** `1234.5` as `1,234.50`, or `1.234,50` with `decimalComma`. */
export function formatNumber(value: number, decimalComma = false, decimals = 2): string {
  const fixed = Math.abs(value).toFixed(decimals);
  const [whole, fraction] = fixed.split('.');
  const sign = value < 0 ? '-' : '';
  const body = decimalComma ? `${grouped(Number(whole), '.')}${fraction ? `,${fraction}` : ''}` : `${grouped(Number(whole), ',')}${fraction ? `.${fraction}` : ''}`;
  return sign + body;
}

export type MoneyStyle = 'symbol' | 'code' | 'codeAfter' | 'symbolAfter';

/** An amount with its currency the way the style writes it; EUR amounts after the number use a decimal comma. */
export function formatMoney(value: number, currency: string, style: MoneyStyle): string {
  const decimals = currency === 'JPY' ? 0 : 2;
  const symbol = SYMBOLS[currency];
  switch (style) {
    case 'symbol':
      return symbol ? `${value < 0 ? '-' : ''}${symbol}${formatNumber(Math.abs(value), false, decimals)}` : `${currency} ${formatNumber(value, false, decimals)}`;
    case 'code':
      return `${currency} ${formatNumber(value, false, decimals)}`;
    case 'codeAfter':
      return `${formatNumber(value, currency === 'EUR', decimals)} ${currency}`;
    case 'symbolAfter':
      return symbol && currency === 'EUR' ? `${formatNumber(value, true, decimals)} €` : `${currency} ${formatNumber(value, false, decimals)}`;
  }
}

export const money = (value: number) => Math.round(value * 100) / 100;

const OCR_CONFUSIONS: [RegExp, string][] = [
  [/o/g, '0'],
  [/l/g, '1'],
  [/m/g, 'rn'],
  [/e/g, 'c'],
  [/i/g, 'l'],
  [/S/g, '5'],
];

/**
 * Damages text the way scanning and pasting do: letters misread in a few words, doubled spaces,
 * upper-cased lines, lines broken or dropped. `level` 0..1 sets how much. Lines holding digits
 * are left alone.
 */
export function addNoise(random: Random, text: string, level: number): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (const line of lines) {
    if (/\d/.test(line)) {
      out.push(line);
      continue;
    }
    if (line.trim() && random.chance(level * 0.08)) continue;
    let damaged = line;
    if (random.chance(level * 0.3)) {
      damaged = damaged
        .split(' ')
        .map((word) => {
          if (/\d|@/.test(word) || !random.chance(level * 0.25)) return word;
          const [pattern, replacement] = random.pick(OCR_CONFUSIONS);
          let done = false;
          return word.replace(pattern, (match) => {
            if (done) return match;
            done = true;
            return replacement;
          });
        })
        .join(' ');
    }
    if (random.chance(level * 0.15)) damaged = damaged.replace(/ /g, () => (random.chance(0.3) ? '  ' : ' '));
    if (random.chance(level * 0.05)) damaged = damaged.toUpperCase();
    if (damaged.length > 60 && random.chance(level * 0.2)) {
      const cut = damaged.indexOf(' ', Math.floor(damaged.length / 2));
      if (cut > 0) damaged = `${damaged.slice(0, cut)}\n${damaged.slice(cut + 1)}`;
    }
    out.push(damaged);
  }
  return out.join('\n');
}
