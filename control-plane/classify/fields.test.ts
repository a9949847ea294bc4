import { describe, expect, it } from 'vitest';
import { contractFields, invoiceFields, letterFields, receiptFields, reportFields, resumeFields, spreadsheetFields } from './fields.ts';
import { currencyIn, dominantCurrency, findAmounts, findDates, parseAmount } from './parse.ts';

const dates = (text: string, dayFirst = true) => findDates(text, dayFirst).map((d) => d.iso);

describe('dates', () => {
  it('reads the common ways of writing a date as ISO', () => {
    expect(dates('2024-03-05')).toEqual(['2024-03-05']);
    expect(dates('2024/3/5')).toEqual(['2024-03-05']);
    expect(dates('March 5, 2024 and Mar. 5th 2024')).toEqual(['2024-03-05', '2024-03-05']);
    expect(dates('5 March 2024, 5th of March 2024, 05-Mar-2024, 5 Mar 24')).toEqual(['2024-03-05', '2024-03-05', '2024-03-05', '2024-03-05']);
    expect(dates('05.03.2024')).toEqual(['2024-03-05']);
  });

  it('settles slashes by the day that cannot be a month, else by the document’s habit', () => {
    expect(dates('13/03/2024')).toEqual(['2024-03-13']);
    expect(dates('03/13/2024')).toEqual(['2024-03-13']);
    expect(dates('03/04/2024', true)).toEqual(['2024-04-03']);
    expect(dates('03/04/2024', false)).toEqual(['2024-03-04']);
    expect(dates('12/03/24')).toEqual(['2024-03-12']);
  });

  it('refuses dates that do not exist', () => {
    expect(dates('31/02/2024, 2023-02-29, 2024-13-01')).toEqual([]);
    expect(dates('2024-02-29')).toEqual(['2024-02-29']);
  });
});

describe('amounts and currencies', () => {
  it('reads either decimal mark, group separators and negatives', () => {
    expect(parseAmount('1,234.56')).toBe(1234.56);
    expect(parseAmount('1.234,56')).toBe(1234.56);
    expect(parseAmount('1 234,5')).toBe(1234.5);
    expect(parseAmount("1'234.50")).toBe(1234.5);
    expect(parseAmount('1,234')).toBe(1234);
    expect(parseAmount('(12.00)')).toBe(-12);
    expect(parseAmount('-7')).toBe(-7);
    expect(parseAmount('abc')).toBeNull();
  });

  it('finds amounts with the currency written beside them', () => {
    expect(findAmounts('Total: $1,200.00').map(({ value, currency }) => ({ value, currency }))).toEqual([{ value: 1200, currency: 'USD' }]);
    expect(findAmounts('Summe 1.234,56 €').map(({ value, currency }) => ({ value, currency }))).toEqual([{ value: 1234.56, currency: 'EUR' }]);
    expect(findAmounts('Credit: -£30.00').map(({ value, currency }) => ({ value, currency }))).toEqual([{ value: -30, currency: 'GBP' }]);
    expect(findAmounts('CHF 99.90').map(({ value, currency }) => ({ value, currency }))).toEqual([{ value: 99.9, currency: 'CHF' }]);
  });

  it('names currencies by ISO 4217 code, a code before a symbol, CA$ apart from $', () => {
    expect(currencyIn('CA$ 10')).toBe('CAD');
    expect(currencyIn('A$5')).toBe('AUD');
    expect(currencyIn('R$ 5')).toBe('BRL');
    expect(currencyIn('¥500')).toBe('JPY');
    expect(currencyIn('$5 (USD)')).toBe('USD');
    expect(currencyIn('no money here')).toBeNull();
    expect(dominantCurrency('€5, €6, $7')).toBe('EUR');
  });
});

describe('invoice fields', () => {
  it('reads number, dates, total, currency and vendor, and works out a due date from net terms', () => {
    const text = ['Harrow & Lyle Ltd', '4 Dock Street, Hull HU1 1AA', '', 'INVOICE', 'Invoice No: HL-2024-031', 'Invoice date: 12 February 2024', 'Bill to: Penrose Foods', 'Boxes 10 x 12.00   120.00', 'Subtotal £120.00', 'VAT (20%) £24.00', 'Total due £144.00', 'Payment terms: net 30 days'].join('\n');
    expect(invoiceFields(text)).toEqual({ invoiceNumber: 'HL-2024-031', invoiceDate: '2024-02-12', dueDate: '2024-03-13', total: 144, currency: 'GBP', vendor: 'Harrow & Lyle Ltd' });
  });

  it('takes a credit note’s own number over the invoice it refers to, and keeps the sign printed', () => {
    const text = ['Mapleton GmbH', 'Credit Note', 'Original invoice: INV-5521', 'Credit note no. CN-88', 'Date: 2024-05-02', 'Amount credited: EUR -250.00'].join('\n');
    expect(invoiceFields(text)).toMatchObject({ invoiceNumber: 'CN-88', invoiceDate: '2024-05-02', total: -250, currency: 'EUR', vendor: 'Mapleton GmbH' });
  });

  it('names the vendor from a From line, without the address or e-mail after it', () => {
    expect(invoiceFields('Invoice 17\nFrom: Ana Ruiz (illustrator), ana@example.org\nTotal: 300.00 EUR').vendor).toBe('Ana Ruiz');
  });
});

describe('receipt fields', () => {
  it('reads merchant, date, total and currency, skipping banners and the subtotal', () => {
    const text = ['*** RECEIPT ***', 'Blue Door Deli', '12 Bank St', '07/14/2024 12:31', 'Bagel 3.50', 'Coffee 2.75', 'SUBTOTAL 6.25', 'TAX 0.50', 'TOTAL $6.75', 'CASH 10.00', 'CHANGE 3.25'].join('\n');
    expect(receiptFields(text)).toEqual({ merchant: 'Blue Door Deli', date: '2024-07-14', total: 6.75, currency: 'USD' });
  });
});

describe('contract fields', () => {
  it('reads the parties of a "by and between" sentence, keeping Inc. and Ltd.', () => {
    const text = 'CONSULTING AGREEMENT\nThis Agreement is entered into as of January 15, 2024 (the "Effective Date") by and between Orbit Labs Inc., a Delaware corporation ("Client"), and Finch & Co. Ltd. ("Consultant"). The term of this Agreement is eighteen (18) months. Either party may terminate on thirty (30) days written notice.';
    expect(contractFields(text)).toEqual({ parties: ['Orbit Labs Inc.', 'Finch & Co. Ltd.'], effectiveDate: '2024-01-15', term: 'P18M' });
  });

  it('reads parties from role labels and a term in years', () => {
    const text = 'LEASE\nLandlord: Mary Oduya\nTenant: Peter Lind\nThe tenancy starts on 1 June 2024 and runs for a period of two (2) years.';
    expect(contractFields(text)).toEqual({ parties: ['Mary Oduya', 'Peter Lind'], effectiveDate: '2024-06-01', term: 'P2Y' });
  });

  it('reads a numbered list of parties', () => {
    const text = 'AGREEMENT\nDated 3 April 2023\nParties\n(1) Alpha Holdings Limited, a company registered in Scotland;\n(2) Beta Labs AB, of Uppsala.\nThis agreement continues for 5 years.';
    expect(contractFields(text)).toEqual({ parties: ['Alpha Holdings Limited', 'Beta Labs AB'], effectiveDate: '2023-04-03', term: 'P5Y' });
  });
});

describe('resume fields', () => {
  it('reads name, e-mail, phone and the skills section up to the next heading', () => {
    const text = ['JANE O\'NEILL', 'jane.oneill@example.com | +44 20 7946 0018 | Leeds', '', 'Experience', 'Analyst, Rowan Bank  2019 – present', '', 'Skills', 'SQL, Python | Power BI', '• Stakeholder management', '', 'Education', 'BSc Mathematics'].join('\n');
    expect(resumeFields(text)).toEqual({ name: "Jane O'Neill", email: 'jane.oneill@example.com', phone: '+44 20 7946 0018', skills: ['SQL', 'Python', 'Power BI', 'Stakeholder management'] });
  });

  it('does not take a span of years for a phone number', () => {
    expect(resumeFields('Sam Reed\nsam@example.org\n2015 - 2019 Clerk').phone).toBeUndefined();
  });
});

describe('letter fields', () => {
  it('reads sender from the sign-off, recipient from the salutation, and the date above it', () => {
    const text = ['14 Elm Row', 'Bath BA1 1AA', '', '2 September 2024', '', 'Dear Dr. Patel,', '', 'Thank you for seeing me last week.', '', 'Kind regards,', 'Tom Ashby', 'Practice Manager'].join('\n');
    expect(letterFields(text)).toEqual({ sender: 'Tom Ashby', recipient: 'Dr. Patel', date: '2024-09-02' });
  });
});

describe('report fields', () => {
  it('reads the title and the period from quarters, halves, years, months and ranges', () => {
    expect(reportFields('Acme plc\nQuarterly Report Q3 2024\nRevenue grew.')).toEqual({ title: 'Quarterly Report Q3 2024', period: { start: '2024-07-01', end: '2024-09-30' } });
    expect(reportFields('Results for H2 2023').period).toEqual({ start: '2023-07-01', end: '2023-12-31' });
    expect(reportFields('Annual review FY 2022').period).toEqual({ start: '2022-01-01', end: '2022-12-31' });
    expect(reportFields('Results for the quarter ended 30 September 2024').period).toEqual({ start: '2024-07-01', end: '2024-09-30' });
    expect(reportFields('Results for the year ended 31 March 2024').period).toEqual({ start: '2023-04-01', end: '2024-03-31' });
    expect(reportFields('Traffic report, February 2024').period).toEqual({ start: '2024-02-01', end: '2024-02-29' });
    expect(reportFields('Audit findings\nPeriod: 2024-01-15 to 2024-02-14').period).toEqual({ start: '2024-01-15', end: '2024-02-14' });
    expect(reportFields('Title: Pump station review\nNo dates here')).toEqual({ title: 'Pump station review' });
  });
});

describe('spreadsheet fields', () => {
  it('reads the header cells and counts the rows below, with tabs, commas or semicolons', () => {
    expect(spreadsheetFields('a\tb\tc\n1\t2\t3\n4\t5\t6\n')).toEqual({ columns: ['a', 'b', 'c'], rowCount: 2 });
    expect(spreadsheetFields('name;price\ntea;3,50')).toEqual({ columns: ['name', 'price'], rowCount: 1 });
    expect(spreadsheetFields('')).toEqual({ columns: [], rowCount: 0 });
  });
});
