/**
 * Field extraction per category, by labels and layout: what a reader looks for first on such a
 * document. Dates come out as `YYYY-MM-DD`, amounts as numbers (signed as printed), currencies
 * as ISO 4217 codes, terms as ISO 8601 durations (`P12M`). A field not found is left out.
 */
import { dominantCurrency, findAmounts, findDates, firstDate, isoFromParts, type FoundAmount } from './parse.ts';

export type Fields = Record<string, unknown>;

interface Doc {
  text: string;
  /** Non-empty lines, trimmed. */
  lines: string[];
  /** Settles dates such as 03/04/2024: month first only in dollar documents. */
  dayFirst: boolean;
  currency: string | null;
}

export function readDoc(text: string): Doc {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter((line) => line.length > 0);
  const currency = dominantCurrency(text);
  return { text, lines, dayFirst: currency !== 'USD', currency };
}

/** A `Label: value` line's value, or the next line's when the label stands alone. */
function labelled(doc: Doc, label: RegExp, accept: (value: string) => boolean = (v) => v.length > 0): string | null {
  const pattern = new RegExp(`^(?:${label.source})\\s*[:#.\\-–]?\\s*(.*)$`, 'i');
  for (let i = 0; i < doc.lines.length; i++) {
    const line = doc.lines[i]!;
    const m = pattern.exec(line);
    if (!m) continue;
    const value = m[m.length - 1]!.trim();
    if (accept(value)) return value;
    const next = doc.lines[i + 1];
    if (!value && next && accept(next)) return next;
  }
  return null;
}

/** The first date on a line matching `label`, or on the line after it when the label line has none. */
function labelledDate(doc: Doc, label: RegExp, exclude?: RegExp): string | null {
  const pattern = new RegExp(label.source, 'i');
  for (let i = 0; i < doc.lines.length; i++) {
    const line = doc.lines[i]!;
    const m = pattern.exec(line);
    if (!m || exclude?.test(line)) continue;
    const after = line.slice(m.index + m[0].length);
    const date = firstDate(after, doc.dayFirst) ?? (after.trim() === '' || /^[\s:]*$/.test(after) ? firstDate(doc.lines[i + 1] ?? '', doc.dayFirst) : null);
    if (date) return date;
  }
  return null;
}

/** A line's amounts without the dates and percentages on it. */
function amountsOn(line: string, dayFirst: boolean): FoundAmount[] {
  let cleaned = line;
  for (const date of findDates(line, dayFirst)) cleaned = cleaned.slice(0, date.index) + ' '.repeat(date.length) + cleaned.slice(date.index + date.length);
  cleaned = cleaned.replace(/\d+(?:[.,]\d+)?\s?%/g, (m) => ' '.repeat(m.length));
  return findAmounts(cleaned);
}

/** The amount a total line means: the last one written with a currency or decimals, else the last. */
function lineAmount(line: string, dayFirst: boolean): FoundAmount | null {
  const amounts = amountsOn(line, dayFirst);
  const money = amounts.filter((a) => a.currency || /[.,]\d{2}\b/.test(line.slice(a.index)));
  return money[money.length - 1] ?? amounts[amounts.length - 1] ?? null;
}

/**
 * Total labels from the most to the least telling. Subtotals, tax totals, counts and savings
 * are never totals.
 */
const TOTAL_LABELS = [
  /\b(?:amount|balance|total)\s+(?:due|payable|owing|to pay)\b|\bamount payable\b|\bgrand total\b|\btotal amount\b|\binvoice total\b|\btotal (?:credit|credited|refund)|\bamount credited\b|\bcredit total\b|\btotal (?:paid|charged)\b|\btotal value\b|\bestimated total\b/i,
  /(?<!sub[\s-]?)\btotal\b(?!\s*(?:items?|qty|quantity|savings?|tax|vat|gst|excl|before|discount|weight|units|number))/i,
  /\b(?:amount paid|amount charged|you paid|balance|charged to)\b/i,
];
const NOT_TOTAL = /\bsub[\s-]?total\b|\btotal (?:tax|vat|gst)\b|\bsavings?\b|\bchange\b|\bcash tendered\b/i;

/** The document's total: the last amount on the last line of the most telling total label. */
export function findTotal(doc: Doc): FoundAmount | null {
  for (const label of TOTAL_LABELS) {
    for (let i = doc.lines.length - 1; i >= 0; i--) {
      const line = doc.lines[i]!;
      const m = label.exec(line);
      if (!m || NOT_TOTAL.test(line)) continue;
      const amount = lineAmount(line.slice(m.index), doc.dayFirst) ?? lineAmount(doc.lines[i + 1] ?? '', doc.dayFirst);
      if (amount) return amount;
    }
  }
  return null;
}

function withTotal(doc: Doc, fields: Fields): void {
  const total = findTotal(doc);
  if (total) fields.total = total.value;
  const currency = total?.currency ?? doc.currency;
  if (currency) fields.currency = currency;
}

const COMPANY_SUFFIX = /\b(?:ltd|limited|inc|incorporated|llc|llp|gmbh|corp|corporation|co|company|pty|plc|s\.?a|sarl|b\.?v|ag|oy|ab|srl|group|partners|studio|solutions|services|consulting)\b\.?/i;
const DOCUMENT_TITLES = /^(?:tax\s+|sales\s+|commercial\s+|pro[\s-]?forma\s+|vat\s+)*(?:invoice|bill|credit\s+(?:note|memo)|proforma|statement|receipt|quotation|quote)\b/i;

/** The part of a line before a tagline (`Acme Ltd — since 1990`, `Acme | Data`). */
const beforeTagline = (line: string) => line.split(/\s+[—–|·]\s+|\s+-\s+/)[0]!.trim();

const looksLikeAddressOrContact = (line: string) => /\d|@|www\.|https?:|\b(?:tel|phone|fax|vat|abn|email|e-mail)\b/i.test(line);

// ---------------------------------------------------------------------------------------------
// invoice

const SUPPLIER_LABEL = /(?:from|vendor|supplier|seller|bill(?:ed)? from|issued by|payee|company)/;
const NUMBER_LABEL = /\b(?:(?:tax\s+)?invoice|inv|credit\s*(?:note|memo)|pro[\s-]?forma(?:\s+invoice)?|bill|document|quote|quotation)\s*(?:no\.?|number|num\.?|nr\.?|#|id|ref(?:erence)?)?\s*[:#.]?\s*#?\s*((?:[A-Z]{1,4} (?=\d))?[A-Z0-9][A-Z0-9\-/._]*\d[A-Z0-9\-/._]*)/gi;
const OTHER_DOCUMENT = /\b(?:original|against|relates? to|refers? to|in respect of|cancels|re:|regarding)\b/i;

function invoiceNumber(doc: Doc): string | null {
  const candidates: { value: string; score: number }[] = [];
  doc.lines.forEach((line, at) => {
    NUMBER_LABEL.lastIndex = 0;
    for (const m of line.matchAll(NUMBER_LABEL)) {
      const value = m[1]!.replace(/[.,;:]+$/, '');
      if (findDates(value).some((d) => d.length === value.length)) continue;
      if (/^(?:19|20)\d{2}$/.test(value) && !/(?:no|number|#)/i.test(m[0])) continue;
      const explicit = /(?:no\.?|number|num|nr|#|id)\s*[:#.]?\s*#?\s*[A-Z0-9]/i.test(m[0]);
      const other = OTHER_DOCUMENT.test(line.slice(0, m.index + 12));
      candidates.push({ value, score: (explicit ? 2 : 1) - (other ? 3 : 0) - at / 1000 });
    }
  });
  candidates.sort((a, b) => b.score - a.score);
  return candidates[0]?.value ?? null;
}

function vendor(doc: Doc): string | null {
  const named = labelled(doc, SUPPLIER_LABEL, (v) => v.length > 1 && !/^\d/.test(v));
  if (named) return beforeTagline(named.split(/,|\s+\(|\s+<|\s+[\w.+-]+@/)[0]!);
  const customerAt = doc.lines.findIndex((line) => /^(?:bill(?:ed)?\s+to|invoice\s+to|sold\s+to|ship\s+to|customer|client|to)\b/i.test(line));
  const head = doc.lines.slice(0, customerAt > 0 ? Math.min(customerAt, 10) : 10);
  const candidates = head.map(beforeTagline).filter((line) => line.length > 1 && !DOCUMENT_TITLES.test(line) && !looksLikeAddressOrContact(line) && !/^(?:date|due|page)\b/i.test(line));
  return candidates.find((line) => COMPANY_SUFFIX.test(line)) ?? candidates[0] ?? null;
}

function dueDate(doc: Doc, issued: string | null): string | null {
  const due = labelledDate(doc, /\b(?:due\s+date|payment\s+due|due\s+(?:on|by)|pay(?:able)?\s+by|due|payment\s+deadline|please\s+pay\s+(?:by|before))\b/);
  if (due) return due;
  const net = /\b(?:net\s*(\d{1,3})|within\s+(\d{1,3})\s+days)\b/i.exec(doc.text);
  if (!net || !issued) return null;
  const days = Number(net[1] ?? net[2]);
  const date = new Date(`${issued}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

export function invoiceFields(text: string): Fields {
  const doc = readDoc(text);
  const fields: Fields = {};
  const number = invoiceNumber(doc);
  if (number) fields.invoiceNumber = number;
  const issued =
    labelledDate(doc, /\b(?:invoice\s+date|date\s+of\s+issue|issue\s+date|date\s+issued|issued(?:\s+on)?|billing\s+date|tax\s+point|dated|credit\s+note\s+date|date)\b/, /\b(?:due|valid|delivery|ship|order|original)\b/i) ??
    findDates(text, doc.dayFirst).map((d) => d.iso)[0] ??
    null;
  if (issued) fields.invoiceDate = issued;
  const due = dueDate(doc, issued);
  if (due) fields.dueDate = due;
  withTotal(doc, fields);
  const seller = vendor(doc);
  if (seller) fields.vendor = seller;
  return fields;
}

// ---------------------------------------------------------------------------------------------
// receipt

const RECEIPT_NOISE = /^(?:[-=*_#~.\s]+|\**\s*(?:sales\s+)?receipt\s*\**|customer copy|merchant copy|welcome|thank you.*|tax invoice|copy)$/i;

function merchant(doc: Doc): string | null {
  for (const line of doc.lines.slice(0, 6)) {
    const name = beforeTagline(line.replace(/^[^\p{L}\p{N}]+/u, '').replace(/^(?:welcome to|thank you for (?:shopping|dining|riding) (?:at|with))\s+/i, '').replace(/[*=#~]+/g, '').trim());
    if (!name || RECEIPT_NOISE.test(name) || looksLikeAddressOrContact(name) || findDates(name).length) continue;
    return name;
  }
  return null;
}

export function receiptFields(text: string): Fields {
  const doc = readDoc(text);
  const fields: Fields = {};
  const name = merchant(doc);
  if (name) fields.merchant = name;
  const date = findDates(text, doc.dayFirst)[0];
  if (date) fields.date = date.iso;
  withTotal(doc, fields);
  return fields;
}

// ---------------------------------------------------------------------------------------------
// contract

const ROLE_LABELS = /^(?:party\s+(?:a|b|1|2|one|two)|first party|second party|landlord|lessor|tenant|lessee|employer|employee|client|customer|contractor|consultant|provider|service provider|supplier|licensor|licensee|disclosing party|receiving party|company|buyer|seller)\s*[:]\s*(.+)$/i;

/** Abbreviations whose full stop does not end a sentence. */
const ABBREVIATION = /\b(Inc|Corp|Ltd|Co|Mr|Mrs|Ms|Dr|St|Jr|Sr|No|Nr|Pty|Bros|Ave|Rd|L\.L\.C|S\.A|B\.V|N\.V)\./g;
const HELD_DOT = '\u2024';

function cleanParty(raw: string): string | null {
  const name = raw
    .replaceAll(HELD_DOT, '.')
    .replace(/^[\s,;:]*(?:and|&)\s+/i, '')
    .replace(/^(?:\(?\d+\)?\.?|[a-z]\)|[-•*])\s+/i, '')
    .replace(/^the\s+(?=[A-Z])/, '')
    .split(/,|\s+\(|\s+hereinafter|\s+of\s+\d|\s+with\s+(?:its|a|an)\s|\s+residing|\s+whose|\s+located|\s+a\s+(?:[A-Z][a-z]+\s+)*(?:corporation|company|limited|partnership)|\s+an?\s+individual/)[0]!
    .replace(/[“”"']/g, '')
    .replace(/[,;:\s]+$/, '')
    .replace(/(?<!\b(?:Inc|Corp|Ltd|Co|Jr|Sr|Pty|Bros|S\.A|B\.V|N\.V|L\.L\.C))\.+$/, '')
    .trim();
  return name.length > 1 && name.length < 80 && /[A-Za-z]/.test(name) ? name : null;
}

function parties(doc: Doc): string[] {
  const flat = doc.lines.join(' ').replace(ABBREVIATION, `$1${HELD_DOT}`);
  const between = /\bbetween\s*:?\s+(.{3,600}?)(?:\.\s|\.$|;|\bWHEREAS\b|\bRECITALS\b|\bwho agree\b)/i.exec(flat);
  if (between) {
    const sentence = between[1]!;
    const roles = [...sentence.matchAll(/\(([^)]*)\)/g)];
    if (roles.length >= 2) {
      const names: string[] = [];
      let from = 0;
      for (const role of roles) {
        const before = sentence.slice(from, role.index);
        from = role.index + role[0].length;
        if (!/[A-Za-z]{2}/.test(before.replace(/\b(?:and|the|a|an)\b/gi, ''))) continue;
        const name = cleanParty(before.split(/\s+and\s+(?=[A-Z])/).pop()!);
        if (name && !names.includes(name)) names.push(name);
      }
      if (names.length >= 2) return names;
    }
    const parts = sentence.split(/\s+and\s+(?=(?:the\s+)?[A-Z])/);
    if (parts.length >= 2) {
      const names = [parts.slice(0, -1).join(' and '), parts[parts.length - 1]!].map(cleanParty).filter((n): n is string => n !== null);
      if (names.length >= 2) return names;
    }
  }
  const labelledNames: string[] = [];
  for (const line of doc.lines) {
    const m = ROLE_LABELS.exec(line);
    if (!m) continue;
    const name = cleanParty(m[1]!);
    if (name && !/_{3,}/.test(m[1]!) && !labelledNames.includes(name)) labelledNames.push(name);
  }
  if (labelledNames.length >= 2) return labelledNames;
  const partiesAt = doc.lines.findIndex((line) => /^(?:the\s+)?parties\s*:?$/i.test(line) || /^parties\s*:/i.test(line));
  if (partiesAt >= 0) {
    const listed = doc.lines
      .slice(partiesAt + 1, partiesAt + 6)
      .filter((line) => /^(?:\(?\d+\)?\.?|[a-z]\)|[-•*])\s+/.test(line))
      .map(cleanParty)
      .filter((n): n is string => n !== null);
    if (listed.length >= 2) return listed;
  }
  return labelledNames;
}

const NUMBER_WORDS: Record<string, number> = {
  one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
  thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, eighteen: 18, twenty: 20, 'twenty-four': 24, thirty: 30, 'thirty-six': 36, sixty: 60, ninety: 90,
};
const QUANTITY = `(\\d{1,3}|${Object.keys(NUMBER_WORDS).join('|')})(?:\\s*\\((\\d{1,3})\\))?[\\s-]+(day|week|month|year)s?`;
const TERM_CONTEXT = new RegExp(
  `(?:\\bterm\\b[^.]{0,60}?|\\bperiod of\\s+|\\bduration\\b[^.]{0,20}?|\\bremain in (?:full )?(?:force|effect)\\b[^.]{0,30}?|\\bcontinue\\b[^.]{0,40}?|\\bruns? for\\s+|\\bexpires?\\s+|\\bfixed[\\s-]term\\b[^.]{0,30}?|\\bfor an? (?:initial )?(?:term|period) of\\s+|\\bvalid for\\s+|\\blasts? for\\s+|\\bfor\\s+)${QUANTITY}(?!\\s*(?:'|’)?\\s*(?:(?:prior\\s+)?written\\s+|advance\\s+)?notice|\\s+(?:after|of|from)\\s+(?:receipt|acceptance|delivery|invoice))`,
  'i',
);

function term(doc: Doc): string | null {
  const flat = doc.lines.join(' ');
  const sentences = flat.split(/(?<=\.)\s+/).filter((s) => !/\bprobation|\binvoice\b|\bwarrant/i.test(s));
  const ranked = [...sentences.filter((s) => /\bterm\b|\bduration\b|\bexpire/i.test(s)), ...sentences];
  for (const sentence of ranked) {
    const m = TERM_CONTEXT.exec(sentence);
    if (!m) continue;
    const count = m[2] ? Number(m[2]) : /^\d+$/.test(m[1]!) ? Number(m[1]) : NUMBER_WORDS[m[1]!.toLowerCase()];
    if (!count) continue;
    const unit = { day: 'D', week: 'W', month: 'M', year: 'Y' }[m[3]!.toLowerCase() as 'day' | 'week' | 'month' | 'year'];
    return `P${count}${unit}`;
  }
  return null;
}

function effectiveDate(doc: Doc): string | null {
  const flat = doc.lines.join(' ');
  const labels = [
    /effective\s+date\s*[:\-–]\s*/i,
    /\beffective\s+(?:as\s+of|from|on)\s+/i,
    /\b(?:as of|dated(?: as of)?|made (?:on|this)|entered into (?:on|as of)?)\s+/i,
    /\b(?:commencement|start(?:ing)?)\s+date\s*[:\-–]?\s*/i,
    /\b(?:commences?|begins?|starts?)\s+on\s+/i,
    /\bdate\s*:\s*/i,
  ];
  for (const label of labels) {
    const m = label.exec(flat);
    if (!m) continue;
    const date = findDates(flat.slice(m.index + m[0].length, m.index + m[0].length + 40), doc.dayFirst)[0];
    if (date && date.index < 12) return date.iso;
  }
  const defined = /(.{0,60})\(\s*(?:the\s+)?["“]effective date["”]\s*\)/i.exec(flat);
  if (defined) {
    const dates = findDates(defined[1]!, doc.dayFirst);
    if (dates.length) return dates[dates.length - 1]!.iso;
  }
  return null;
}

export function contractFields(text: string): Fields {
  const doc = readDoc(text);
  const fields: Fields = {};
  const names = parties(doc);
  if (names.length) fields.parties = names;
  const date = effectiveDate(doc);
  if (date) fields.effectiveDate = date;
  const duration = term(doc);
  if (duration) fields.term = duration;
  return fields;
}

// ---------------------------------------------------------------------------------------------
// resume

const EMAIL = /[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}/;
const PHONE = /(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,5}(?:[\s.-]\d{2,8}){1,4}(?!\d)/g;
const SECTION_HEADINGS =
  /^(?:(?:professional\s+|work\s+|employment\s+|career\s+|relevant\s+)?(?:experience|history|summary|profile|objective)|education|academic.*|qualifications?|certifications?|licen[cs]es|languages?|interests|hobbies|references?.*|projects|awards|achievements|publications|volunteer.*|activities|extra-?curricular.*|memberships|affiliations|courses|training|contact|personal details|(?:core\s+|key\s+|technical\s+|professional\s+)?(?:skills|competencies|expertise|strengths)|tools|technologies)\s*:?$/i;
const SKILL_HEADING = /^(?:(?:core|key|technical|professional|relevant|hard|soft|it|computer)\s+)?(?:skills?|competenc(?:ies|e)|expertise|strengths|skill\s+set|skillset|tools(?:\s+(?:and|&)\s+technologies)?|technologies|tech\s+stack)\b\s*:?\s*(.*)$/i;

function titleCase(name: string): string {
  return name === name.toUpperCase() ? name.toLowerCase().replace(/(^|[\s'-])(\p{L})/gu, (_, sep: string, c: string) => sep + c.toUpperCase()) : name;
}

function personName(doc: Doc): string | null {
  const named = labelled(doc, /(?:full\s+)?name/);
  if (named) return titleCase(named);
  for (const line of doc.lines.slice(0, 5)) {
    const candidate = line.replace(/^(?:curriculum vitae|resume|résumé|cv)\s*[:\-–—|]?\s*/i, '').split(/\s+[|·•—–-]\s+|,/)[0]!.trim();
    if (!candidate) continue;
    if (/^[\p{Lu}][\p{L}'.-]*(?:\s+[\p{Lu}][\p{L}'.-]*){1,3}$/u.test(candidate) && !SECTION_HEADINGS.test(candidate)) return titleCase(candidate);
  }
  return null;
}

function phoneNumber(doc: Doc): string | null {
  const ordered = [...doc.lines.filter((line) => /\b(?:phone|tel|mobile|cell|mob)\b/i.test(line)), ...doc.lines.slice(0, 8), ...doc.lines];
  for (const line of ordered) {
    for (const m of line.matchAll(PHONE)) {
      const raw = m[0].trim();
      const digits = raw.replace(/\D/g, '');
      if (digits.length < 7 || digits.length > 15) continue;
      if (findDates(raw).length || /^(?:19|20)\d{2}\s*[-–]\s*(?:19|20)\d{2}$/.test(raw)) continue;
      return raw;
    }
  }
  return null;
}

function skills(doc: Doc): string[] {
  const found: string[] = [];
  const add = (text: string) => {
    for (const piece of text.split(/\s*(?:[,;|•·●▪]|\s\/\s|\s-\s|\band\b(?=\s+[A-Z]))\s*/)) {
      const skill = piece.replace(/^[-*•\s]+/, '').replace(/^[\p{L} ]{2,30}:\s*/u, '').replace(/[.\s]+$/, '').trim();
      if (skill.length >= 1 && skill.length <= 40 && !found.some((s) => s.toLowerCase() === skill.toLowerCase())) found.push(skill);
    }
  };
  for (let i = 0; i < doc.lines.length; i++) {
    const m = SKILL_HEADING.exec(doc.lines[i]!);
    if (!m) continue;
    if (m[1]) add(m[1]);
    for (let j = i + 1; j < doc.lines.length; j++) {
      const line = doc.lines[j]!;
      if (SECTION_HEADINGS.test(line.replace(/[:]$/, '')) && !SKILL_HEADING.test(line)) break;
      if (line.length > 120) break;
      add(line);
    }
    if (found.length) break;
  }
  return found;
}

export function resumeFields(text: string): Fields {
  const doc = readDoc(text);
  const fields: Fields = {};
  const name = personName(doc);
  if (name) fields.name = name;
  const email = EMAIL.exec(text);
  if (email) fields.email = email[0];
  const phone = phoneNumber(doc);
  if (phone) fields.phone = phone;
  const list = skills(doc);
  if (list.length) fields.skills = list;
  return fields;
}

// ---------------------------------------------------------------------------------------------
// letter

const SALUTATION = /^(?:dear(?:est)?|hi|hello|hey|to)\s+(.+?)\s*[,:!]?$/i;
const CLOSING = /^(?:(?:yours\s+)?(?:sincerely|faithfully|truly)|(?:with\s+)?(?:kind(?:est)?|best|warm(?:est)?|many)\s+(?:regards|wishes)|regards|best|cheers|thanks(?:\s+again)?|thank you|love|with (?:much |all my )?love|all my love|much love|hugs|respectfully(?:\s+yours)?|cordially|warmly|take care|yours(?:\s+ever)?|see you soon|with gratitude|gratefully)\s*[,.!]?$/i;

function sender(doc: Doc): string | null {
  const from = labelled(doc, /from/);
  if (from) return from;
  for (let i = doc.lines.length - 1; i >= 0; i--) {
    if (!CLOSING.test(doc.lines[i]!)) continue;
    const next = doc.lines.slice(i + 1).find((line) => !/^[_\-.\s]+$/.test(line) && !/^\(?signature\)?$/i.test(line));
    if (next) return next.split(/,\s+/)[0]!.trim();
  }
  return null;
}

function recipient(doc: Doc): string | null {
  for (const line of doc.lines) {
    const m = SALUTATION.exec(line);
    if (m && m[1]!.length < 60 && !/whom it may concern/i.test(m[1]!)) return m[1]!.replace(/[,:!]+$/, '').trim();
  }
  return null;
}

export function letterFields(text: string): Fields {
  const doc = readDoc(text);
  const fields: Fields = {};
  const from = sender(doc);
  if (from) fields.sender = from;
  const to = recipient(doc);
  if (to) fields.recipient = to;
  const salutationAt = doc.lines.findIndex((line) => SALUTATION.test(line));
  const head = salutationAt > 0 ? doc.lines.slice(0, salutationAt).join('\n') : doc.lines.slice(0, 10).join('\n');
  const date = firstDate(head, doc.dayFirst) ?? firstDate(doc.text, doc.dayFirst);
  if (date) fields.date = date;
  return fields;
}

// ---------------------------------------------------------------------------------------------
// report

const REPORT_WORDS = /\b(?:report|review|summary|results|update|assessment|analysis|statements?|post[\s-]?mortem|audit|findings|evaluation|study|overview|accounts)\b/i;

export interface Period {
  start: string;
  end: string;
}

const lastDay = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();
const monthSpan = (year: number, fromMonth: number, toMonth: number): Period => ({ start: isoFromParts(year, fromMonth, 1)!, end: isoFromParts(year, toMonth, lastDay(year, toMonth))! });

/** The first day of a span of `months` that ends on `end`: a month's first day when `end` is a month's last. */
function shiftedStart(end: string, months: number): string {
  const [y, m, d] = end.split('-').map(Number) as [number, number, number];
  const date = d === lastDay(y, m) ? new Date(Date.UTC(y, m - months, 1)) : new Date(Date.UTC(y, m - 1 - months, d + 1));
  return date.toISOString().slice(0, 10);
}

const ORDINAL_QUARTER: Record<string, number> = { first: 1, second: 2, third: 3, fourth: 4, '1st': 1, '2nd': 2, '3rd': 3, '4th': 4 };

/** The period a report covers, read from an explicit range, a quarter, a half, a year or a month. */
export function reportPeriod(text: string, dayFirst: boolean): Period | null {
  const dates = findDates(text, dayFirst);
  for (let i = 0; i + 1 < dates.length; i++) {
    const a = dates[i]!;
    const b = dates[i + 1]!;
    const between = text.slice(a.index + a.length, b.index);
    if (/^\s*(?:to|until|till|through|thru|[-–—]|and)\s*$/i.test(between) && a.iso <= b.iso) {
      const before = text.slice(Math.max(0, a.index - 40), a.index);
      if (/(?:period|from|between|covering|for|dates?|window|:)\s*(?:the\s+)?$/i.test(before) || i === 0) return { start: a.iso, end: b.iso };
    }
  }
  const ended = /\b(quarter|three months|half[\s-]year|six months|(?:fiscal |financial )?year|twelve months|month)\s+end(?:ed|ing)\s+/i.exec(text);
  if (ended) {
    const date = findDates(text.slice(ended.index + ended[0].length, ended.index + ended[0].length + 30), dayFirst)[0];
    if (date && date.index === 0) {
      const kind = ended[1]!.toLowerCase();
      const months = /quarter|three/.test(kind) ? 3 : /half|six/.test(kind) ? 6 : /year|twelve/.test(kind) ? 12 : 1;
      return { start: shiftedStart(date.iso, months), end: date.iso };
    }
  }
  const quarter = /\bQ([1-4])\s*[-/ ]?\s*(?:FY\s*)?'?((?:19|20)\d{2})\b|\b((?:19|20)\d{2})\s*[-/ ]?\s*Q([1-4])\b/i.exec(text);
  if (quarter) {
    const q = Number(quarter[1] ?? quarter[4]);
    const year = Number(quarter[2] ?? quarter[3]);
    return monthSpan(year, q * 3 - 2, q * 3);
  }
  const wordQuarter = /\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter\s+(?:of\s+)?((?:19|20)\d{2})\b/i.exec(text);
  if (wordQuarter) {
    const q = ORDINAL_QUARTER[wordQuarter[1]!.toLowerCase()]!;
    return monthSpan(Number(wordQuarter[2]), q * 3 - 2, q * 3);
  }
  const half = /\bH([12])\s*(?:FY\s*)?((?:19|20)\d{2})\b|\b(first|second)\s+half\s+(?:of\s+)?((?:19|20)\d{2})\b/i.exec(text);
  if (half) {
    const h = half[1] ? Number(half[1]) : half[3]!.toLowerCase() === 'first' ? 1 : 2;
    return monthSpan(Number(half[2] ?? half[4]), h === 1 ? 1 : 7, h === 1 ? 6 : 12);
  }
  const year = /\b(?:FY\s*|fiscal\s+year\s+|financial\s+year\s+|annual\s+report\s+|year\s+)((?:19|20)\d{2})\b/i.exec(text);
  if (year) return monthSpan(Number(year[1]), 1, 12);
  const month = /\b(january|february|march|april|may|june|july|august|september|october|november|december)\s+((?:19|20)\d{2})\b/i.exec(text);
  if (month) {
    const m = findDates(`1 ${month[1]} ${month[2]}`)[0];
    if (m) {
      const [y, mm] = m.iso.split('-').map(Number) as [number, number];
      return monthSpan(y, mm, mm);
    }
  }
  return null;
}

export function reportFields(text: string): Fields {
  const doc = readDoc(text);
  const fields: Fields = {};
  const titled = labelled(doc, /(?:report\s+)?title/);
  const head = doc.lines.slice(0, 5);
  const title = titled ?? head.find((line) => REPORT_WORDS.test(line) && line.length <= 120) ?? head[0];
  if (title) fields.title = title;
  const period = reportPeriod(doc.lines.slice(0, 15).join('\n'), doc.dayFirst) ?? reportPeriod(doc.text, doc.dayFirst);
  if (period) fields.period = period;
  return fields;
}

// ---------------------------------------------------------------------------------------------
// spreadsheet

/** The cells of a delimited line; double quotes group cells holding the delimiter. */
function splitCells(line: string, delimiter: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '"') {
      if (quoted && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else quoted = !quoted;
    } else if (c === delimiter && !quoted) {
      cells.push(cell.trim());
      cell = '';
    } else cell += c;
  }
  cells.push(cell.trim());
  return cells;
}

/** The delimiter that splits the most lines into the same number of cells. */
export function guessDelimiter(lines: readonly string[]): string {
  let best = '\t';
  let bestScore = -1;
  for (const delimiter of ['\t', ',', ';', '|']) {
    const counts = lines.slice(0, 50).map((line) => splitCells(line, delimiter).length);
    const first = counts[0] ?? 1;
    const score = first < 2 ? 0 : counts.filter((count) => count === first).length * first;
    if (score > bestScore) {
      best = delimiter;
      bestScore = score;
    }
  }
  return best;
}

/** The header row's cells and how many rows follow it (the first non-empty line is the header). */
export function spreadsheetFields(text: string): Fields {
  const lines = text.split(/\r?\n/).filter((line) => line.trim().length > 0);
  if (lines.length === 0) return { columns: [], rowCount: 0 };
  const delimiter = guessDelimiter(lines);
  return { columns: splitCells(lines[0]!, delimiter).filter((cell) => cell.length > 0), rowCount: lines.length - 1 };
}

export const FIELD_READERS = {
  invoice: invoiceFields,
  receipt: receiptFields,
  contract: contractFields,
  resume: resumeFields,
  letter: letterFields,
  report: reportFields,
  spreadsheet: spreadsheetFields,
} as const;

