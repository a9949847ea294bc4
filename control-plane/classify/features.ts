/**
 * The features the classifier reads from a document's text: word unigrams and bigrams (within a
 * line, function words left out) with numbers, amounts, dates, e-mail addresses, phone numbers and
 * links folded into shape tokens, weighted 1 + ln(tf) and scaled to unit length; plus how tabular
 * the text is. Length and amount counts are left out on purpose: in a generated corpus they tell
 * templates apart, not kinds of documents. Pure and deterministic; every pattern has bounded
 * repetition, so a long line costs linear time.
 */

const MONTH_WORDS = new Set([
  'january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december',
  'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec',
]);

/** Shape replacements, applied in order to each lower-cased line. */
const SHAPES: [RegExp, string][] = [
  [/[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}/g, ' zzemail '],
  [/\b(?:https?:\/\/|www\.)\S+/g, ' zzurl '],
  [/\b\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}\b/g, ' zzdate '],
  [/[$€£¥₹]\s?\d[\d,.' ]{0,20}\d|\d[\d,.' ]{0,20}\d\s?[$€£¥₹]/g, ' zzmoney '],
  [/\b\d{1,3}(?:[,.' ]\d{3})*[.,]\d{2}\b/g, ' zzamount '],
  [/\d+(?:[.,]\d+)?\s?%/g, ' zzpct '],
  [/\+?\(?\d{2,4}\)?(?:[\s.-]\d{2,4}){2,4}\b/g, ' zzphone '],
  [/\b(?:19|20)\d{2}\b/g, ' zzyear '],
  [/\d+/g, ' zznum '],
];

/**
 * Function words every kind of English text uses: as features they only teach the model how much
 * prose a template had. Pronouns stay, since letters speak to someone and reports do not.
 */
const STOPWORDS = new Set(
  'a an the and or but nor so yet if then than as at by for from in into of off on onto out over to up upon with within without about above across after against along among around before behind below beneath beside between beyond during except inside near past since through throughout toward towards under until via is am are was were be been being do does did doing has have had having can could may might must shall should will would this that these those there here it its also just very too such each any all both either neither other some own same which what who whom whose when where why how not no only more most much many few own again further once'
    .split(' '),
);

const WORD = /[a-z][a-z']*[a-z]|[a-z]/g;

/** The tokens of one line of text, in order. */
export function lineTokens(line: string): string[] {
  let text = line.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
  for (const [pattern, shape] of SHAPES) text = text.replace(pattern, shape);
  const tokens: string[] = [];
  for (const match of text.matchAll(WORD)) {
    const word = match[0];
    if (word.length < 2 || STOPWORDS.has(word)) continue;
    tokens.push(MONTH_WORDS.has(word) ? 'zzmonth' : word);
  }
  return tokens;
}

/** The share of non-empty lines that split into the same number (at least 2) of cells by tabs, commas or semicolons. */
export function tabularShare(lines: readonly string[]): number {
  if (lines.length < 2) return 0;
  let best = 0;
  for (const separator of ['\t', ',', ';', '|']) {
    const counts = new Map<number, number>();
    for (const line of lines) {
      const cells = line.split(separator).length;
      if (cells >= 2) counts.set(cells, (counts.get(cells) ?? 0) + 1);
    }
    for (const count of counts.values()) best = Math.max(best, count / lines.length);
  }
  return best;
}

const bucket = (value: number, edges: readonly number[]) => edges.filter((edge) => value >= edge).length;

/** The feature vector of a document: feature name to weight. */
export function documentFeatures(text: string): Map<string, number> {
  const lines = text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line.length > 0);
  const counts = new Map<string, number>();
  const add = (feature: string) => counts.set(feature, (counts.get(feature) ?? 0) + 1);
  for (const line of lines) {
    const tokens = lineTokens(line);
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]!;
      add(token);
      if (i > 0) add(`${tokens[i - 1]}_${token}`);
    }
  }
  const features = new Map<string, number>();
  let norm = 0;
  for (const [feature, count] of counts) {
    const weight = 1 + Math.log(count);
    features.set(feature, weight);
    norm += weight * weight;
  }
  norm = Math.sqrt(norm);
  if (norm > 0) for (const [feature, weight] of features) features.set(feature, weight / norm);
  features.set(`@tabular${bucket(tabularShare(lines), [0.3, 0.6, 0.85])}`, 0.5);
  return features;
}
