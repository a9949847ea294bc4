/**
 * The training corpus: documents of every category the model learns, generated from templates
 * with a seeded random source, so the model rebuilds identically (`build-model.ts`). Its names,
 * wording and layouts are its own: the evaluation fixtures (`fixtures/make-fixtures.ts`) are
 * written from other templates, so measured accuracy is on documents the model has not seen.
 */
import { type Random, seededRandom } from './random.ts';
import {
  addDays,
  addNoise,
  dateStylesFor,
  type DateParts,
  formatDate,
  formatMoney,
  formatNumber,
  MONTHS,
  money,
  type MoneyStyle,
  randomDate,
} from './text-kit.ts';

export interface TrainingDocument {
  category: string;
  subcategory: string | null;
  text: string;
}

const FIRST = ['James', 'Maria', 'Robert', 'Linda', 'Michael', 'Sofia', 'David', 'Emma', 'Daniel', 'Olivia', 'Thomas', 'Hannah', 'Lucas', 'Chloe', 'Omar', 'Priya', 'Kenji', 'Fatima', 'Pedro', 'Ingrid', 'Samuel', 'Grace', 'Noah', 'Aisha'];
const LAST = ['Smith', 'Garcia', 'Johnson', 'Müller', 'Brown', 'Rossi', 'Nguyen', 'Kowalski', 'Andersen', 'Patel', 'Tanaka', 'Okafor', 'Dubois', 'Silva', 'Cohen', 'Larsen', 'Walsh', 'Moreau', 'Fischer', 'Reyes'];
const COMPANY_HEADS = ['Acme', 'Northwind', 'Bluepeak', 'Silverline', 'Redwood', 'Brightpath', 'Ironbridge', 'Lakeside', 'Summit', 'Greenfield', 'Crescent', 'Harbor', 'Pinecrest', 'Orion', 'Vertex', 'Maple', 'Falcon', 'Cobalt'];
const COMPANY_TAILS = ['Ltd', 'Inc.', 'LLC', 'GmbH', 'Corp.', 'Solutions Ltd', 'Group', 'Partners', 'Systems Inc.', 'Trading Co.', 'Consulting LLC', 'Supplies Ltd'];
const STREETS = ['Main Street', 'Oak Avenue', 'High Street', 'Market Road', 'Station Road', 'Elm Street', 'Park Lane', 'River Drive', 'Hauptstrasse', 'Church Road'];
const CITIES = ['Springfield, IL 62701', 'London EC1A 1BB', 'Berlin 10115', 'Toronto, ON M5H 2N2', 'Austin, TX 73301', 'Dublin D02 X285', 'Manchester M1 1AE', 'Munich 80331', 'Seattle, WA 98101', 'Lyon 69002'];
const CURRENCIES = ['USD', 'USD', 'EUR', 'EUR', 'GBP', 'CHF', 'CAD', 'JPY', 'AUD', 'INR'];

const person = (r: Random) => `${r.pick(FIRST)} ${r.pick(LAST)}`;
const company = (r: Random) => `${r.pick(COMPANY_HEADS)} ${r.pick(COMPANY_TAILS)}`;
const address = (r: Random) => [`${r.int(1, 999)} ${r.pick(STREETS)}`, r.pick(CITIES)];
const email = (r: Random, name: string) => `${name.toLowerCase().replace(/[^a-z]+/g, '.')}@${r.pick(['example.com', 'mail.com', 'inbox.org', 'post.net'])}`;
const phone = (r: Random) => r.pick([`+1 ${r.int(200, 989)} ${r.int(200, 999)} ${r.int(1000, 9999)}`, `+44 20 ${r.int(1000, 9999)} ${r.int(1000, 9999)}`, `(${r.int(200, 989)}) ${r.int(200, 999)}-${r.int(1000, 9999)}`, `+49 30 ${r.int(100000, 999999)}`]);
const dateIn = (r: Random, d: DateParts, currency: string) => formatDate(d, r.pick(dateStylesFor(currency)));
const amountIn = (r: Random, value: number, currency: string) => formatMoney(value, currency, r.pick<MoneyStyle>(['symbol', 'symbol', 'code', 'codeAfter', 'symbolAfter']));
const sentences = (r: Random, pool: readonly string[], min: number, max: number) => r.sample(pool, r.int(min, max)).join(' ');

const GOODS = ['Consulting services', 'Software licence (annual)', 'Web design', 'Office chairs', 'Printer toner', 'Cloud hosting', 'Maintenance visit', 'Training workshop', 'Steel brackets', 'Laptop stand', 'Translation services', 'Legal review', 'Copy paper A4', 'Network cabling', 'Support retainer', 'Marketing campaign', 'Delivery charge', 'Graphic design hours'];

function lineItems(r: Random) {
  return r.sample(GOODS, r.int(1, 5)).map((description) => {
    const quantity = r.int(1, 12);
    const unit = money(r.int(5, 900) + r.int(0, 99) / 100);
    return { description, quantity, unit, amount: money(quantity * unit) };
  });
}

function invoice(r: Random, subcategory: 'commercial' | 'proforma' | 'credit_note'): string {
  const currency = r.pick(CURRENCIES);
  const vendor = company(r);
  const customer = company(r);
  const issued = randomDate(r);
  const items = lineItems(r);
  const subtotal = money(items.reduce((sum, item) => sum + item.amount, 0));
  const taxRate = r.pick([0, 5, 7, 10, 19, 20]);
  const tax = money((subtotal * taxRate) / 100);
  const total = money(subtotal + tax);
  const number = r.pick([`INV-${issued.year}-${r.int(1, 9999)}`, `${r.int(10000, 99999)}`, `A${r.int(100, 999)}/${issued.year}`, `#${r.int(1000, 9999)}`]);
  const title = {
    commercial: r.pick(['INVOICE', 'Invoice', 'TAX INVOICE', 'Commercial Invoice', 'Sales Invoice', 'Bill']),
    proforma: r.pick(['PRO FORMA INVOICE', 'Proforma Invoice', 'Pro-forma invoice', 'PROFORMA']),
    credit_note: r.pick(['CREDIT NOTE', 'Credit Note', 'Credit Memo', 'CREDIT MEMO']),
  }[subcategory];
  const numberLabel = {
    commercial: r.pick(['Invoice No:', 'Invoice Number:', 'Invoice #:', 'Inv. No.', 'Invoice ID:']),
    proforma: r.pick(['Proforma No:', 'Pro forma number:', 'Reference:', 'Quote ref:']),
    credit_note: r.pick(['Credit Note No:', 'Credit Memo #:', 'Credit note number:']),
  }[subcategory];
  const lines: string[] = [];
  const header = [vendor, ...address(r), ...(r.chance(0.5) ? [`Tel: ${phone(r)}`] : []), ...(r.chance(0.4) ? [`VAT Reg: GB${r.int(100000000, 999999999)}`] : [])];
  if (r.chance(0.7)) lines.push(...header, '', title);
  else lines.push(title, '', ...header);
  lines.push(`${numberLabel} ${subcategory === 'credit_note' ? 'CN-' : ''}${number}`);
  lines.push(`${r.pick(['Date:', 'Invoice Date:', 'Issue date:', 'Dated:'])} ${dateIn(r, issued, currency)}`);
  const due = addDays(issued, r.pick([14, 15, 30, 45, 60]));
  if (subcategory === 'commercial') lines.push(`${r.pick(['Due Date:', 'Payment due:', 'Due:', 'Pay by:'])} ${dateIn(r, due, currency)}`);
  if (subcategory === 'credit_note') lines.push(`${r.pick(['Original invoice:', 'Against invoice:', 'Relates to invoice'])} INV-${r.int(1000, 9999)}`);
  if (subcategory === 'proforma') lines.push(`${r.pick(['Valid until:', 'Quotation valid until:', 'Offer valid to:'])} ${dateIn(r, due, currency)}`);
  lines.push('', r.pick(['Bill To:', 'Billed to:', 'Customer:', 'Invoice to:', 'Sold To:']), customer, ...address(r), '');
  lines.push(r.pick(['Description\tQty\tUnit Price\tAmount', 'Item                Qty   Price    Total', 'DESCRIPTION | QUANTITY | RATE | AMOUNT']));
  for (const item of items) lines.push(`${item.description}\t${item.quantity}\t${formatNumber(item.unit)}\t${formatNumber(subcategory === 'credit_note' ? -item.amount : item.amount)}`);
  lines.push('', `Subtotal: ${amountIn(r, subtotal, currency)}`);
  if (taxRate) lines.push(`${r.pick(['VAT', 'Tax', 'Sales tax', 'GST'])} (${taxRate}%): ${amountIn(r, tax, currency)}`);
  const totalLabel = {
    commercial: r.pick(['Total Due:', 'TOTAL:', 'Amount Due:', 'Balance Due:', 'Grand Total:', 'Total amount payable:']),
    proforma: r.pick(['Total:', 'Estimated total:', 'Total (proforma):']),
    credit_note: r.pick(['Total Credit:', 'Amount credited:', 'Credit total:']),
  }[subcategory];
  lines.push(`${totalLabel} ${amountIn(r, subcategory === 'credit_note' ? -total : total, currency)}`, '');
  const closing = {
    commercial: ['Payment terms: Net 30 days.', 'Please pay by bank transfer quoting the invoice number.', 'Late payments are subject to interest of 1.5% per month.', 'Thank you for your business!', 'Bank: First National, IBAN DE89 3704 0044 0532 0130 00', 'Make all cheques payable to the company above.', 'Payment is due within the terms stated above.', 'Please remit payment to the account below.'],
    proforma: ['This is a pro forma invoice and not a demand for payment.', 'Prices are valid for 30 days from the date of issue.', 'Goods will be shipped on receipt of advance payment.', 'This document is issued for customs and prepayment purposes.', 'A final commercial invoice will follow on dispatch.', 'Please confirm the order by signing and returning this proforma.'],
    credit_note: ['This credit note reduces the amount owed on the original invoice.', 'Reason: goods returned damaged.', 'The credit will be applied to your next invoice.', 'Refund issued for overbilling on the previous statement.', 'No payment is required for this document.', 'Reason for credit: discount not applied.'],
  }[subcategory];
  lines.push(sentences(r, closing, 1, 3));
  return lines.join('\n');
}

const STORES = ['FreshMart', 'City Grocers', 'QuickStop', 'HomeBase Hardware', 'Book Nook', 'Pharma Plus', 'Urban Outfit', 'TechZone', 'Corner Deli', 'Garden Centre', 'MegaSave Supermarket', 'Wellness Chemist', 'Toolbox DIY', 'Page Turner Books', 'Style Street', 'Pet Palace', 'Daily Needs Mini Market', 'Sportsworld'];
const RESTAURANTS = ['Luigi\'s Trattoria', 'The Golden Dragon', 'Blue Anchor Pub', 'Café Central', 'Sakura Sushi', 'Burger Barn', 'El Toro Tapas', 'The Olive Tree', 'Morning Brew Coffee', 'The Tea Room', 'Spice Route Curry House', 'Harbour Fish Bar', 'Le Petit Bistro', 'Noodle Bar 88'];
const GROCERIES = ['Milk 1L', 'Bread', 'Eggs x12', 'Bananas', 'Coffee beans', 'Cheddar', 'Batteries AA', 'Shampoo', 'Notebook', 'USB cable', 'Paint brush', 'Apples 1kg', 'Pasta', 'Tomatoes', 'Chocolate', 'Orange juice', 'Socks', 'Light bulb', 'Paracetamol 500mg', 'Toothpaste', 'Dog food 2kg', 'Screws 50pc', 'Wall plugs', 'Paperback novel', 'T-shirt M', 'Jeans 32/32', 'Yoghurt 4pk', 'Butter 250g', 'Rice 2kg', 'Cough syrup', 'Sunscreen SPF30', 'Greeting card', 'Bin bags', 'Tennis balls'];
const DISHES = ['Margherita pizza', 'Caesar salad', 'Fish and chips', 'Spaghetti carbonara', 'Pad thai', 'Cheeseburger', 'Ramen', 'Tiramisu', 'House wine', 'Sparkling water', 'Espresso', 'IPA pint', 'Lemonade', 'Garlic bread', 'Cappuccino', 'Americano', 'Hot chocolate', 'Blueberry muffin', 'Toasted bagel', 'Scone with jam', 'Chicken tikka masala', 'Pilau rice', 'Soup of the day', 'Club sandwich', 'Pot of tea', 'Cheesecake', 'Steak frites', 'Side salad'];

function receipt(r: Random, subcategory: 'retail' | 'restaurant' | 'transport'): string {
  const currency = r.pick(['USD', 'USD', 'EUR', 'GBP', 'CAD', 'AUD']);
  const when = randomDate(r);
  const time = `${r.int(7, 22)}:${String(r.int(0, 59)).padStart(2, '0')}`;
  const lines: string[] = [];
  let subtotal = 0;
  const merchant = subcategory === 'retail' ? r.pick(STORES) : subcategory === 'restaurant' ? r.pick(RESTAURANTS) : r.pick(['Shell Station 224', 'City Cab Co.', 'Metro Parking', 'BP Fuel Stop', 'Yellow Taxi', 'Esso Express', 'Airport Shuttle']);
  lines.push(r.chance(0.5) ? merchant.toUpperCase() : merchant, ...address(r));
  if (r.chance(0.5)) lines.push(`Tel ${phone(r)}`);
  lines.push(r.pick(['', '--------------------------------', '*** SALES RECEIPT ***', 'RECEIPT', 'Customer copy']));
  lines.push(`${dateIn(r, when, currency)} ${time}`);
  if (subcategory === 'retail') {
    if (r.chance(0.5)) lines.push(r.pick([`Store #${r.int(10, 999)}  Register ${r.int(1, 12)}  Cashier: ${r.pick(FIRST)}`, `Till ${r.int(1, 9)}  Op ${r.int(10, 99)}`, `Served by ${r.pick(FIRST)}`]));
    for (const item of r.sample(GROCERIES, r.int(2, 7))) {
      const price = money(r.int(1, 40) + r.int(0, 99) / 100);
      subtotal += price;
      lines.push(`${item}  ${formatNumber(price)}`);
    }
  } else if (subcategory === 'restaurant') {
    if (r.chance(0.5)) lines.push(r.pick([`Table ${r.int(1, 40)}   Server: ${r.pick(FIRST)}   Guests: ${r.int(1, 6)}`, `Order ${r.int(100, 999)}  Eat in`, `Takeaway  Order no. ${r.int(10, 99)}`]));
    for (const dish of r.sample(DISHES, r.int(2, 6))) {
      const price = money(r.int(3, 30) + r.pick([0, 0.5, 0.95]));
      subtotal += price;
      lines.push(`${r.int(1, 2)} ${dish}  ${formatNumber(price)}`);
    }
  } else if (merchant.includes('Cab') || merchant.includes('Taxi') || merchant.includes('Shuttle')) {
    const fare = money(r.int(8, 90) + r.int(0, 99) / 100);
    subtotal += fare;
    lines.push(`Driver: ${person(r)}  Cab no. ${r.int(100, 999)}`, `Pickup: ${r.pick(STREETS)}  Drop-off: ${r.pick(['Airport', 'Central Station', 'Hotel Bristol', r.pick(STREETS)])}`, `Distance: ${r.int(2, 40)} km`, `Fare  ${formatNumber(fare)}`);
  } else if (merchant.includes('Parking')) {
    const fee = money(r.int(3, 40));
    subtotal += fee;
    lines.push(`Entry ${r.int(6, 12)}:${r.int(10, 59)}  Exit ${r.int(13, 20)}:${r.int(10, 59)}`, `Duration ${r.int(1, 9)} h`, `Parking fee  ${formatNumber(fee)}`);
  } else {
    const litres = r.int(10, 60) + r.int(0, 99) / 100;
    const perLitre = r.int(120, 210) / 100;
    const fuel = money(litres * perLitre);
    subtotal += fuel;
    lines.push(`Pump ${r.int(1, 12)}  ${r.pick(['Unleaded 95', 'Diesel', 'Super 98'])}`, `${formatNumber(litres)} L @ ${formatNumber(perLitre, false, 3)}/L`, `Fuel  ${formatNumber(fuel)}`);
  }
  subtotal = money(subtotal);
  const tax = money(subtotal * r.pick([0, 0.05, 0.07, 0.2]));
  const tip = subcategory === 'restaurant' && r.chance(0.6) ? money(subtotal * r.pick([0.1, 0.15, 0.18])) : 0;
  const total = money(subtotal + tax + tip);
  lines.push(`${r.pick(['SUBTOTAL', 'Subtotal', 'Sub-total'])}  ${formatNumber(subtotal)}`);
  if (tax) lines.push(`${r.pick(['TAX', 'Tax', 'VAT included', 'Sales Tax'])}  ${formatNumber(tax)}`);
  if (tip) lines.push(`${r.pick(['Tip', 'Gratuity', 'Service'])}  ${formatNumber(tip)}`);
  lines.push(`${r.pick(['TOTAL', 'Total', 'TOTAL PAID', 'Amount paid', 'BALANCE'])}  ${amountIn(r, total, currency)}`);
  lines.push(r.pick([`VISA ****${r.int(1000, 9999)}`, 'CASH', `Mastercard ending ${r.int(1000, 9999)}`, 'Contactless DEBIT', `AMEX xxxx${r.int(1000, 9999)}`]));
  if (r.chance(0.4)) lines.push(`Auth code: ${r.int(100000, 999999)}`);
  const goodbye = {
    retail: ['Thank you for shopping with us!', 'Returns accepted within 30 days with receipt.', 'Keep this receipt for your records.', 'You saved 2.00 today with your loyalty card.', 'Please come again.', 'Exchanges only with proof of purchase.'],
    restaurant: ['Thank you for dining with us!', 'Gratuity not included.', 'We hope to see you again soon.', 'Follow us for weekly specials.', 'Please retain this receipt.'],
    transport: ['Thank you, drive safely.', 'Receipt for expense claims.', 'Keep your ticket to exit the car park.', 'Have a safe journey.', 'Thank you for riding with us.'],
  }[subcategory];
  lines.push(sentences(r, goodbye, 1, 2));
  return lines.join('\n');
}

const CONTRACT_CLAUSES: Record<string, string[]> = {
  service: [
    'Provider shall perform the services described in Schedule A in a professional and workmanlike manner.',
    'Client shall pay the fees set out in Schedule B within thirty (30) days of receipt of each invoice.',
    'Either party may terminate this Agreement upon thirty (30) days written notice to the other party.',
    'Provider is an independent contractor and nothing herein creates an employment relationship.',
    'All intellectual property created in the course of the services shall vest in Client upon full payment.',
    'Provider shall maintain professional liability insurance throughout the Term.',
    'Neither party shall be liable for indirect or consequential damages arising out of this Agreement.',
  ],
  employment: [
    'The Employee shall serve as {role} and shall report to the {boss}.',
    'The Employer shall pay the Employee an annual gross salary of {salary}, payable in monthly instalments.',
    'The first three (3) months of employment constitute a probationary period.',
    'The Employee is entitled to twenty-five (25) days of paid annual leave per calendar year.',
    'Either party may terminate the employment by giving one (1) month written notice.',
    'The Employee shall not engage in any competing business during the employment.',
    'Normal working hours are 40 hours per week, Monday to Friday.',
  ],
  lease: [
    'The Landlord agrees to lease to the Tenant the premises located at {street}.',
    'The Tenant shall pay a monthly rent of {rent}, due on the first day of each month.',
    'A security deposit equal to two months rent shall be paid upon signing.',
    'The Tenant shall keep the premises in good repair and shall not sublet without written consent.',
    'The Landlord shall be responsible for structural repairs and building insurance.',
    'Pets are not permitted on the premises without the Landlord\'s prior consent.',
    'Utilities including electricity, gas and water are the responsibility of the Tenant.',
  ],
  nda: [
    'The Receiving Party shall hold all Confidential Information in strict confidence.',
    'Confidential Information means any non-public business, technical or financial information disclosed by the Disclosing Party.',
    'The obligations of confidentiality shall not apply to information that is publicly available.',
    'The Receiving Party shall use Confidential Information solely to evaluate the proposed business relationship.',
    'Upon request, the Receiving Party shall return or destroy all copies of Confidential Information.',
    'No licence to any intellectual property is granted by this Agreement.',
  ],
};

const NUMBER_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'eighteen', 'twenty-four', 'thirty-six'];
const numberWord = (n: number) => ({ 18: 'eighteen', 24: 'twenty-four', 36: 'thirty-six' } as Record<number, string>)[n] ?? NUMBER_WORDS[n] ?? String(n);

function contract(r: Random, subcategory: 'service' | 'employment' | 'lease' | 'nda'): string {
  const currency = r.pick(CURRENCIES);
  const effective = randomDate(r);
  const [roleA, roleB] = { service: ['Client', 'Provider'], employment: ['Employer', 'Employee'], lease: ['Landlord', 'Tenant'], nda: ['Disclosing Party', 'Receiving Party'] }[subcategory];
  const partyA = subcategory === 'lease' ? person(r) : company(r);
  const partyB = subcategory === 'employment' || subcategory === 'lease' ? person(r) : company(r);
  const title = {
    service: r.pick(['SERVICES AGREEMENT', 'Consulting Agreement', 'MASTER SERVICES AGREEMENT', 'Service Contract']),
    employment: r.pick(['EMPLOYMENT AGREEMENT', 'Contract of Employment', 'Employment Contract']),
    lease: r.pick(['RESIDENTIAL LEASE AGREEMENT', 'Lease Agreement', 'Tenancy Agreement', 'Commercial Lease']),
    nda: r.pick(['NON-DISCLOSURE AGREEMENT', 'Mutual Confidentiality Agreement', 'Confidentiality and Non-Disclosure Agreement']),
  }[subcategory];
  const termValue = r.pick([1, 2, 3, 6, 12, 18, 24, 36]);
  const termUnit = termValue <= 3 && r.chance(0.6) ? 'year' : 'month';
  const termText = r.chance(0.5) ? `${numberWord(termValue)} (${termValue}) ${termUnit}${termValue > 1 ? 's' : ''}` : `${termValue} ${termUnit}${termValue > 1 ? 's' : ''}`;
  const lines = [title, ''];
  const opening = r.pick([
    `This ${title.toLowerCase().replace(/^\w/, (c) => c.toUpperCase())} (the "Agreement") is entered into as of ${dateIn(r, effective, currency)} (the "Effective Date") by and between ${partyA} ("${roleA}") and ${partyB} ("${roleB}").`,
    `This Agreement is made on ${dateIn(r, effective, currency)} between ${partyA} (the "${roleA}") and ${partyB} (the "${roleB}").`,
    `PARTIES:\n1. ${partyA}, hereinafter the "${roleA}"\n2. ${partyB}, hereinafter the "${roleB}"\nEffective Date: ${dateIn(r, effective, currency)}`,
  ]);
  lines.push(opening, '');
  if (r.chance(0.6)) lines.push('RECITALS', `WHEREAS, the ${roleA} wishes to engage the ${roleB} on the terms set out below; and`, 'WHEREAS, the parties wish to record their agreement in writing;', 'NOW, THEREFORE, in consideration of the mutual covenants herein, the parties agree as follows:', '');
  const clauses = r.sample(CONTRACT_CLAUSES[subcategory]!, r.int(3, 6)).map((clause) =>
    clause
      .replace('{role}', r.pick(['Senior Accountant', 'Software Engineer', 'Sales Manager', 'Project Coordinator']))
      .replace('{boss}', r.pick(['Chief Financial Officer', 'Head of Engineering', 'Managing Director']))
      .replace('{salary}', amountIn(r, r.int(30, 140) * 1000, currency))
      .replace('{street}', address(r).join(', '))
      .replace('{rent}', amountIn(r, r.int(6, 40) * 100, currency)),
  );
  const termClause = r.pick([
    `This Agreement shall commence on the Effective Date and continue for a term of ${termText}, unless terminated earlier.`,
    `Term. The term of this Agreement is ${termText} from the Effective Date.`,
    `The ${subcategory === 'lease' ? 'lease' : 'agreement'} shall remain in force for a period of ${termText}.`,
  ]);
  clauses.splice(r.int(0, clauses.length), 0, termClause);
  clauses.forEach((clause, i) => lines.push(`${i + 1}. ${r.chance(0.5) ? `${r.pick(['Scope', 'Payment', 'Term', 'Obligations', 'Termination', 'General'])}. ` : ''}${clause}`));
  lines.push('', `${clauses.length + 1}. Governing Law. This Agreement shall be governed by the laws of ${r.pick(['the State of New York', 'England and Wales', 'Germany', 'the Province of Ontario', 'Ireland'])}.`);
  lines.push('', r.pick(['IN WITNESS WHEREOF, the parties have executed this Agreement as of the Effective Date.', 'Signed by the parties on the date first written above.', 'AGREED AND ACCEPTED:']));
  lines.push('', `${roleA}: ______________________  ${partyA}`, `${roleB}: ______________________  ${partyB}`);
  return lines.join('\n');
}

function report(r: Random, subcategory: 'financial' | 'technical' | 'progress'): string {
  const year = r.int(2019, 2025);
  const quarter = r.int(1, 4);
  const month = r.int(1, 12);
  const periodText = r.pick([
    `Q${quarter} ${year}`,
    `for the quarter ended ${formatDate({ year, month: quarter * 3, day: [31, 30, 30, 31][quarter - 1]! }, 'long')}`,
    `Fiscal Year ${year}`,
    `${MONTHS[month - 1]} ${year}`,
    `for the period ${formatDate({ year, month: 1, day: 1 }, 'long')} to ${formatDate({ year, month: 6, day: 30 }, 'long')}`,
  ]);
  const org = company(r);
  const title = {
    financial: r.pick(['Quarterly Financial Report', 'Annual Report', 'Financial Statements Summary', 'Management Accounts', 'Earnings Report']),
    technical: r.pick(['Performance Test Report', 'Incident Post-Mortem Report', 'Technical Assessment Report', 'Security Audit Report', 'System Architecture Review']),
    progress: r.pick(['Project Status Report', 'Monthly Progress Report', 'Weekly Status Update', 'Programme Progress Report']),
  }[subcategory];
  const lines = [`${org}`, `${title} ${periodText.startsWith('for') ? '' : `- ${periodText}`}`.trim()];
  if (periodText.startsWith('for')) lines.push(periodText.replace(/^\w/, (c) => c.toUpperCase()));
  lines.push(`${r.pick(['Prepared by', 'Author', 'Compiled by'])}: ${person(r)}`, `Date: ${formatDate(randomDate(r, year, year), r.pick(['long', 'iso', 'longDayFirst']))}`, '');
  const sectionsByKind: Record<string, Record<string, string[]>> = {
    financial: {
      'Executive Summary': ['Revenue grew {pct} compared with the same period last year.', 'Operating margin improved on lower input costs.', 'Net income reached {amount}, ahead of guidance.', 'Cash and equivalents stood at {amount} at period end.', 'The board recommends a dividend of 0.12 per share.'],
      'Income Statement': ['Revenue: {amount}', 'Cost of sales: {amount}', 'Gross profit: {amount}', 'Operating expenses: {amount}', 'EBITDA: {amount}', 'Net income: {amount}'],
      'Balance Sheet': ['Total assets: {amount}', 'Total liabilities: {amount}', 'Shareholders\' equity: {amount}', 'Accounts receivable decreased by {pct}.'],
      Outlook: ['We expect revenue growth of {pct} for the full year.', 'Capital expenditure will remain within budget.', 'Currency headwinds may affect margins in the next quarter.'],
    },
    technical: {
      Summary: ['The system sustained {num} requests per second at a p99 latency of {num} ms.', 'A memory leak in the cache layer caused the outage.', 'Three critical vulnerabilities were identified and patched.', 'The database failover completed within the target recovery time.'],
      'Test Environment': ['Load was generated from {num} client machines running the benchmark tool.', 'The cluster consisted of {num} nodes with 16 vCPUs each.', 'All tests ran against build {num} of the service.'],
      Findings: ['CPU utilisation peaked at {pct} during the soak test.', 'Error rate remained below {pct} throughout.', 'Latency increased linearly with concurrent connections.', 'Root cause: a misconfigured connection pool limit.', 'The API gateway dropped requests above {num} connections.'],
      Recommendations: ['Increase the connection pool size and add alerting on saturation.', 'Upgrade the TLS library to the patched version.', 'Add automated regression tests for the failover path.', 'Introduce rate limiting on the public endpoints.'],
    },
    progress: {
      Overview: ['The project is on track overall (status: GREEN).', 'Two milestones were completed this period.', 'The project is slightly behind schedule (status: AMBER).'],
      'Completed This Period': ['Requirements sign-off with stakeholders.', 'Migration of the customer database.', 'User acceptance testing of release 2.', 'Vendor selection for the logistics module.'],
      'Planned Next Period': ['Begin pilot rollout in two regions.', 'Finalise training materials.', 'Complete integration testing.', 'Hold the steering committee review.'],
      'Risks and Issues': ['Key developer availability remains a risk.', 'Budget spent to date is {pct} of the total.', 'Dependency on third-party API delivery.', 'Scope change request pending approval.'],
    },
  };
  const sections = sectionsByKind[subcategory]!;
  for (const [heading, pool] of r.sample(Object.entries(sections), r.int(2, Object.keys(sections).length))) {
    lines.push(r.chance(0.5) ? heading.toUpperCase() : heading);
    for (const sentence of r.sample(pool, r.int(2, Math.min(4, pool.length)))) {
      lines.push(
        (r.chance(0.4) ? '- ' : '') +
          sentence
            .replace(/\{pct\}/g, () => `${r.int(1, 40)}.${r.int(0, 9)}%`)
            .replace(/\{amount\}/g, () => formatMoney(r.int(100, 90000) * 1000, r.pick(CURRENCIES), 'code'))
            .replace(/\{num\}/g, () => String(r.int(2, 5000))),
      );
    }
    lines.push('');
  }
  return lines.join('\n');
}

const JOBS = ['position of Marketing Coordinator', 'Software Developer role', 'position of Financial Analyst', 'Operations Manager vacancy', 'Graphic Designer position', 'role of Research Assistant'];

const BUSINESS_SALUTATIONS = ['Dear Sir or Madam,', 'Dear Customer,', 'Dear Members,', 'Dear Colleagues,', 'Dear Accounts Team,', 'Dear Editor,', 'Dear Supplier,', 'Dear Residents,', 'Dear Partners,'];

function letter(r: Random, subcategory: 'cover_letter' | 'business' | 'personal'): string {
  const sender = person(r);
  const recipient = person(r);
  const date = randomDate(r);
  const lines: string[] = [];
  if (subcategory !== 'personal' && r.chance(0.6)) lines.push(r.chance(0.3) ? company(r) : sender, ...address(r), ...(r.chance(0.5) ? [email(r, sender)] : []), '');
  if (subcategory !== 'personal' || r.chance(0.6)) lines.push(formatDate(date, r.pick(['long', 'longDayFirst', 'iso', 'short'])), '');
  if (subcategory !== 'personal' && r.chance(0.5)) lines.push(...(r.chance(0.5) ? [`${r.pick(['Mr.', 'Ms.', 'Dr.', ''])} ${recipient}`.trim()] : [r.pick(['Customer Service', 'Accounts Department', 'Human Resources', 'The Manager', 'Complaints Department'])]), company(r), ...address(r), '');
  if (subcategory === 'business' && r.chance(0.4)) lines.push(`${r.pick(['Re:', 'Subject:', 'RE:', 'Ref:'])} ${r.pick(['Order confirmation', 'Outstanding account', 'Partnership proposal', 'Change of address', 'Meeting on the 14th', 'Price adjustment', 'Faulty goods', 'Reference for a former employee', 'Office closure', 'Late delivery', 'Renewal of membership'])}`, '');
  if (subcategory === 'cover_letter' && r.chance(0.4)) lines.push(`${r.pick(['Re:', 'Subject:'])} ${r.pick(['Application for', 'Applying for the', 'Vacancy:'])} ${r.pick(TITLES)}`, '');
  const salutation = {
    cover_letter: r.pick(['Dear Hiring Manager,', `Dear ${recipient},`, 'Dear Recruitment Team,', 'To whom it may concern,', `Dear ${r.pick(['Mr.', 'Ms.', 'Dr.'])} ${recipient.split(' ')[1]},`, 'Dear Selection Committee,']),
    business: r.pick([`Dear ${r.pick(['Mr.', 'Ms.', 'Dr.'])} ${recipient.split(' ')[1]},`, `Dear ${recipient},`, ...BUSINESS_SALUTATIONS]),
    personal: r.pick([`Dear ${recipient.split(' ')[0]},`, `Hi ${recipient.split(' ')[0]},`, `Hello ${recipient.split(' ')[0]}!`, `My dear ${recipient.split(' ')[0]},`, `Dearest ${r.pick(['Mum', 'Grandma', 'Aunt Rosa', 'Uncle Tom', 'Dad', 'Nana', 'sis'])},`]),
  }[subcategory];
  lines.push(salutation, '');
  const body = {
    cover_letter: [
      `I am writing to apply for the ${r.pick(JOBS)} advertised on your website.`,
      'With five years of experience in the field, I believe I would be a strong addition to your team.',
      'In my current role I led a team of four and delivered projects on time and within budget.',
      'I have enclosed my resume, which details my qualifications and achievements.',
      'I am particularly drawn to your company\'s commitment to innovation.',
      'I would welcome the opportunity to discuss how my skills match your needs.',
      'Thank you for considering my application. I look forward to hearing from you.',
      'My background in customer service has given me strong communication skills.',
      'Please find my CV attached for your consideration.',
      'I recently graduated and am eager to begin my career with an organisation like yours.',
      'The job description matches my experience closely.',
      'I am available for an interview at your convenience.',
    ],
    business: [
      'Thank you for your letter regarding our recent order.',
      'We are pleased to confirm that the shipment will be dispatched next week.',
      'Please find enclosed the documents you requested.',
      'We regret to inform you that the price of our services will increase from next month.',
      'I would like to propose a meeting to discuss a possible partnership between our companies.',
      'Our records show that your account has an outstanding balance.',
      'Should you have any questions, please do not hesitate to contact me.',
      'We appreciate your continued business and look forward to working with you.',
      'Please note that our office will move to a new address from next quarter.',
      'I wish to complain about the poor service I received at your branch.',
      'The goods arrived damaged and I request a refund or replacement.',
      'I am pleased to recommend my former colleague, who worked with us for four years.',
      'We apologise for the inconvenience caused by the delay.',
      'I am writing to enquire whether you stock spare parts for this model.',
      'Your membership will expire at the end of the month and we invite you to renew.',
      'I would be grateful for a prompt reply.',
      'Please treat this letter as formal notice of our intention to terminate the service.',
    ],
    personal: [
      'It was so lovely to see you at the wedding last month.',
      'The children are growing fast and send their love.',
      'We finally finished painting the kitchen, you would not recognise it!',
      'I miss our long walks by the lake.',
      'How is your new job going? Write back and tell me everything.',
      'The garden is full of roses this year.',
      'We are planning to visit you over the summer holidays.',
      'Thank you so much for the birthday present, it was perfect.',
      'I was so sorry to hear about your news and I am thinking of you.',
      'The weather here has been glorious and we spend every evening outside.',
      'Thank you for having us to stay, we had the best time.',
      'The cat has taken over the sofa again.',
      'Come and stay with us whenever you like, the spare room is ready.',
      'I have started learning the piano, can you believe it?',
    ],
  }[subcategory];
  lines.push(...r.sample(body, r.int(3, 5)).map((s) => (r.chance(0.5) ? s : `${s} ${r.pick(body)}`)), '');
  const closing = {
    cover_letter: r.pick(['Sincerely,', 'Yours faithfully,', 'Kind regards,', 'Respectfully,', 'Yours sincerely,', 'Best regards,']),
    business: r.pick(['Yours sincerely,', 'Best regards,', 'Kind regards,', 'Yours faithfully,', 'Regards,', 'Sincerely,', 'With best wishes,']),
    personal: r.pick(['Love,', 'With love,', 'Hugs,', 'All my love,', 'Take care,', 'Lots of love,', 'Much love,', 'Your friend,', 'Warmly,', 'See you soon,', 'xx']),
  }[subcategory];
  lines.push(closing, subcategory === 'personal' ? sender.split(' ')[0]! : sender);
  if (subcategory === 'business' && r.chance(0.7)) lines.push(r.pick(['Account Manager', 'Director of Sales', 'Customer Relations', 'Head of Procurement', 'Office Manager', 'Chief Executive', 'Membership Secretary']), company(r));
  if (subcategory === 'cover_letter' && r.chance(0.4)) lines.push(r.pick(['Enclosure: Resume', 'Enc. CV', 'Attachment: CV and references']));
  return lines.join('\n');
}

const TITLES = ['Software Engineer', 'Data Analyst', 'Project Manager', 'Registered Nurse', 'Accountant', 'Marketing Specialist', 'Mechanical Engineer', 'Teacher', 'UX Designer', 'Sales Associate', 'Electrician', 'Paralegal', 'Line Cook', 'Restaurant Manager', 'Logistics Coordinator', 'Pharmacist', 'Architect', 'HR Advisor', 'Barista', 'Procurement Officer', 'Store Manager', 'Research Scientist'];
const SKILLS = ['Python', 'SQL', 'Java', 'Excel', 'Project management', 'Agile', 'Scrum', 'Tableau', 'Customer service', 'Leadership', 'Public speaking', 'AutoCAD', 'Photoshop', 'JavaScript', 'React', 'Financial modelling', 'SAP', 'Negotiation', 'Data analysis', 'Machine learning', 'Kubernetes', 'Patient care', 'Bookkeeping', 'Spanish', 'Food hygiene', 'Team building', 'Time management', 'Wiring and testing', 'Legal research', 'Supplier management', 'Payroll', 'Visual merchandising', 'Cash handling', 'Lab techniques'];
const SCHOOLS = ['University of Manchester', 'State University', 'Technical University of Munich', 'City College', 'University of Toronto', 'Trinity College Dublin'];

function resume(r: Random): string {
  const name = person(r);
  const lines: string[] = [];
  const banner = r.pick(['', '', '', 'CURRICULUM VITAE', 'Curriculum Vitae', 'RÉSUMÉ', 'Resume', 'CV']);
  if (banner) lines.push(banner, '');
  const labelledContact = r.chance(0.35);
  if (labelledContact) {
    lines.push(`${r.pick(['Name:', 'Full name:'])} ${name}`, `${r.pick(['Email:', 'E-mail:'])} ${email(r, name)}`, `${r.pick(['Phone:', 'Tel:', 'Mobile:', 'Cell:'])} ${phone(r)}`);
    if (r.chance(0.5)) lines.push(`Address: ${address(r).join(', ')}`);
  } else {
    lines.push(r.chance(0.4) ? name.toUpperCase() : name);
    if (r.chance(0.5)) lines.push(r.pick(TITLES));
    lines.push([email(r, name), phone(r), r.pick(CITIES).split(/[\d,]/)[0]!.trim()].join(r.pick([' | ', ' · ', '\n', ' • '])));
  }
  if (r.chance(0.3)) lines.push(`linkedin.com/in/${name.toLowerCase().replace(/[^a-z]+/g, '')}`);
  lines.push('');
  const summary = ['Results-driven professional with {n} years of experience.', 'Detail-oriented team player seeking a challenging role.', 'Proven track record of improving processes and reducing costs.', 'Passionate about building reliable products and mentoring others.', 'Hard-working and reliable, with excellent references.', 'Recent graduate looking for an entry-level position.', 'Experienced manager with a background in hospitality and retail.', 'Seeking a role where I can grow and contribute to a great team.'];
  if (r.chance(0.8)) lines.push(r.pick(['PROFESSIONAL SUMMARY', 'Summary', 'Profile', 'Objective', 'Personal Statement', 'About Me', 'Career Objective', 'PERSONAL PROFILE']), sentences(r, summary, 1, 2).replace('{n}', String(r.int(2, 15))), '');
  lines.push(r.pick(['EXPERIENCE', 'Work Experience', 'Professional Experience', 'Employment History', 'Career History', 'Employment', 'Work History', 'Relevant Experience', 'CAREER SUMMARY']));
  const bullets = ['Managed a portfolio of 30 client accounts.', 'Reduced processing time by 25% through automation.', 'Led the migration to a new reporting platform.', 'Trained and supervised junior staff.', 'Developed dashboards used by senior management.', 'Coordinated cross-functional teams across three sites.', 'Handled budgets of up to 2M.', 'Designed and shipped new customer-facing features.', 'Prepared meals for up to 200 covers a night.', 'Installed and maintained electrical systems in commercial buildings.', 'Drafted contracts and researched case law.', 'Scheduled deliveries for a fleet of 40 vehicles.', 'Dispensed prescriptions and advised patients.', 'Increased store sales by 12% year on year.', 'Responsible for recruitment and onboarding.'];
  let year = r.int(2021, 2024);
  const layout = r.int(0, 2);
  for (let i = 0; i < r.int(1, 3); i++) {
    const start = year - r.int(1, 4);
    const until = i === 0 ? r.pick(['Present', 'present', 'Current', 'now']) : String(year);
    const title = r.pick(TITLES);
    const employer = company(r);
    lines.push(layout === 0 ? `${title}, ${employer}  ${r.pick(['', 'Jan ', 'Mar ', 'Sep '])}${start} – ${until}` : layout === 1 ? `${start} – ${until}   ${title}, ${employer}` : `${employer} — ${title} (${start}–${until})`);
    for (const bullet of r.sample(bullets, r.int(1, 4))) lines.push(`${r.pick(['•', '-', '*', ''])} ${bullet}`.trim());
    year = start;
  }
  lines.push('', r.pick(['EDUCATION', 'Education', 'Academic Background', 'Qualifications', 'Education and Training', 'ACADEMIC QUALIFICATIONS']), `${r.pick(['B.Sc. Computer Science', 'BA Economics', 'MBA', 'M.Eng. Mechanical Engineering', 'BSc Nursing', 'Diploma in Accounting', 'City & Guilds Level 3 Electrical', 'LLB Law', 'NVQ Level 2 Hospitality', 'PhD Chemistry'])}, ${r.pick(SCHOOLS)}, ${year - r.int(0, 3)}`, '');
  const skills = r.sample(SKILLS, r.int(3, 9));
  lines.push(r.pick(['SKILLS', 'Skills', 'Key Skills', 'Technical Skills', 'Core Competencies', 'Areas of Expertise', 'Competencies', 'Skills & Abilities']), r.pick([skills.join(', '), skills.join(' | '), skills.join(' / '), skills.map((s) => `• ${s}`).join('\n')]));
  const extras: [string, string][] = [
    ['LANGUAGES', r.sample(['English (native)', 'French (fluent)', 'German (intermediate)', 'Spanish (basic)', 'Italian (conversational)'], 2).join(', ')],
    ['Certifications', r.sample(['PMP', 'First Aid at Work', 'AWS Certified Developer', 'Food Safety Level 2', 'CIPD Level 5', 'Forklift licence'], 2).join(', ')],
    ['Interests', r.sample(['Hiking', 'Chess', 'Photography', 'Cooking', 'Volunteering', 'Football', 'Reading'], 3).join(', ')],
    ['Volunteer Work', 'Weekend volunteer at the local animal shelter.'],
    ['References', 'References available upon request.'],
  ];
  for (const [heading, content] of r.sample(extras, r.int(0, 3))) lines.push('', heading, content);
  return lines.join('\n');
}

function spreadsheet(r: Random): string {
  const separator = r.pick(['\t', ',', ',', ';']);
  const schemas: [string[], () => string[]][] = [
    [['Date', 'Region', 'Product', 'Units', 'Revenue'], () => [formatDate(randomDate(r), 'iso'), r.pick(['North', 'South', 'East', 'West']), r.pick(GOODS), String(r.int(1, 500)), formatNumber(r.int(100, 99999) / 10, false).replace(/,/g, '')]],
    [['Name', 'Email', 'Phone', 'Company'], () => { const n = person(r); return [n, email(r, n), phone(r), company(r)]; }],
    [['SKU', 'Item', 'Quantity', 'Location', 'Reorder Level'], () => [`SKU-${r.int(1000, 9999)}`, r.pick(GROCERIES), String(r.int(0, 900)), `Aisle ${r.int(1, 30)}`, String(r.int(5, 50))]],
    [['Employee ID', 'Name', 'Department', 'Hours', 'Week'], () => [String(r.int(100, 999)), person(r), r.pick(['Finance', 'IT', 'Sales', 'HR']), String(r.int(20, 45)), String(r.int(1, 52))]],
    [['Student', 'Maths', 'Science', 'English', 'Average'], () => [person(r), String(r.int(40, 100)), String(r.int(40, 100)), String(r.int(40, 100)), String(r.int(40, 100))]],
    [['Account', 'Description', 'Debit', 'Credit', 'Balance'], () => [String(r.int(1000, 9999)), r.pick(['Rent', 'Salaries', 'Sales', 'Utilities', 'Travel']), formatNumber(r.int(0, 9999), false).replace(/,/g, ''), formatNumber(r.int(0, 9999), false).replace(/,/g, ''), formatNumber(r.int(-5000, 20000), false).replace(/,/g, '')]],
    [['id', 'timestamp', 'sensor', 'value', 'unit'], () => [String(r.int(1, 99999)), `${formatDate(randomDate(r), 'iso')}T${r.int(10, 23)}:${r.int(10, 59)}:00Z`, `s-${r.int(1, 40)}`, String(r.int(0, 1000) / 10), r.pick(['C', 'kPa', '%'])]],
  ];
  const [header, row] = r.pick(schemas);
  const quote = (cell: string) => (separator !== '\t' && cell.includes(separator) ? `"${cell}"` : cell);
  return [header, ...Array.from({ length: r.int(3, 25) }, row)].map((cells) => cells.map(quote).join(separator)).join('\n');
}

const OTHER_KINDS: Record<string, (r: Random) => string> = {
  recipe: (r) =>
    [
      r.pick(['Classic Banana Bread', 'Weeknight Chicken Curry', 'Lemon Drizzle Cake', 'Vegetable Lasagne', 'Tomato Soup']),
      `Serves ${r.int(2, 8)} | Prep ${r.int(10, 30)} min | Cook ${r.int(20, 90)} min`,
      '',
      'Ingredients',
      ...r.sample(['200 g flour', '2 eggs', '100 g butter', '1 onion, chopped', '2 cloves garlic', '400 g tinned tomatoes', '1 tsp salt', '150 ml milk', '3 ripe bananas', '1 tbsp curry paste'], r.int(4, 7)),
      '',
      'Method',
      ...r.sample(['Preheat the oven to 180C.', 'Mix the dry ingredients in a large bowl.', 'Fry the onion until soft.', 'Stir in the remaining ingredients and simmer for 20 minutes.', 'Bake until golden and a skewer comes out clean.', 'Season to taste and serve warm.'], r.int(3, 5)).map((s, i) => `${i + 1}. ${s}`),
    ].join('\n'),
  minutes: (r) =>
    [
      `Minutes of the ${r.pick(['Residents Association', 'Board', 'Parent Teacher', 'Book Club', 'Team'])} Meeting`,
      `Held on ${formatDate(randomDate(r), 'long')} at ${r.int(6, 8)}pm`,
      `Present: ${r.sample(FIRST, 4).join(', ')}`,
      `Apologies: ${r.pick(FIRST)}`,
      '',
      ...r.sample(['1. Minutes of the previous meeting were approved.', '2. The treasurer reported on the summer fair.', '3. Parking on the estate was discussed at length.', '4. Volunteers are needed for the autumn clean-up.', '5. Any other business: none.', 'Action: secretary to write to the council.'], r.int(3, 6)),
      '',
      `Next meeting: ${formatDate(randomDate(r), 'long')}`,
    ].join('\n'),
  news: (r) =>
    [
      r.pick(['Local Library Celebrates 100 Years', 'Storm Causes Flooding Across the Region', 'City Council Approves New Cycle Lanes', 'Football Club Wins Regional Cup', 'New Bakery Opens on the High Street']),
      `By ${person(r)} | ${formatDate(randomDate(r), 'long')}`,
      '',
      sentences(r, ['Residents gathered on Saturday to mark the occasion.', 'Officials said the decision followed months of consultation.', 'Witnesses described scenes of celebration in the town centre.', 'The event attracted visitors from across the county.', 'A spokesperson said more details would follow next week.', 'Emergency services urged people to avoid unnecessary travel.', 'The mayor praised volunteers for their hard work.', '"It is a proud day for everyone," said one local.'], 3, 6),
    ].join('\n'),
  manual: (r) =>
    [
      `${r.pick(['Quick Start Guide', 'User Manual', 'Installation Instructions', 'Safety Instructions'])}: ${r.pick(['Model X200 Coffee Maker', 'Cordless Drill', 'Wireless Router', 'Smart Thermostat'])}`,
      '',
      ...r.sample(['Unpack the device and remove all packaging.', 'Connect the power cable to a grounded outlet.', 'Press and hold the power button for three seconds.', 'The indicator light turns green when ready.', 'Do not immerse the unit in water.', 'Clean the filter every two weeks.', 'Keep out of reach of children.', 'Troubleshooting: if the light flashes red, restart the device.'], r.int(4, 7)).map((s, i) => `Step ${i + 1}: ${s}`),
    ].join('\n'),
  blog: (r) =>
    [
      r.pick(['Ten Tips for Better Sleep', 'My Trip to the Mountains', 'Why I Started Running', 'Growing Tomatoes on a Balcony', 'A Beginner\'s Guide to Birdwatching']),
      `Posted ${formatDate(randomDate(r), 'long')} by ${r.pick(FIRST)}`,
      '',
      sentences(r, ['I never thought I would enjoy it this much.', 'The first week was the hardest, honestly.', 'Here is what I learned along the way.', 'Start small and be consistent.', 'The views at the top were breathtaking.', 'Let me know in the comments what you think!', 'Do not forget to stay hydrated.', 'It changed the way I think about weekends.'], 4, 7),
    ].join('\n'),
  poem: (r) =>
    r
      .sample(['The morning light falls soft and slow,', 'across the fields where rivers flow.', 'A quiet wind, a distant bell,', 'the stories only seasons tell.', 'And when the evening stars appear,', 'I hold the silent moments near.', 'The leaves return to earth again,', 'like whispered words of falling rain.'], r.int(4, 8))
      .join('\n'),
  faq: (r) =>
    [
      'Frequently Asked Questions',
      '',
      ...r.sample([['How do I reset my password?', 'Click "Forgot password" on the sign-in page.'], ['Can I change my delivery address?', 'Yes, until the order is dispatched.'], ['Where is my order?', 'Use the tracking link in your confirmation e-mail.'], ['Do you ship abroad?', 'We ship to most countries in Europe.'], ['How do I cancel my subscription?', 'Go to Account settings and choose Cancel.']], r.int(3, 5)).flatMap(([q, a]) => [`Q: ${q}`, `A: ${a}`, '']),
    ].join('\n'),
  itinerary: (r) =>
    [
      `Travel Itinerary: ${r.pick(['Rome', 'Lisbon', 'Kyoto', 'New York', 'Edinburgh'])}`,
      '',
      ...Array.from({ length: r.int(2, 4) }, (_, i) => `Day ${i + 1}: ${r.sample(['Arrive and check in to the hotel', 'Walking tour of the old town', 'Museum visit in the morning', 'Day trip to the coast', 'Free afternoon for shopping', 'Dinner at a local restaurant', 'Flight home in the evening'], 2).join('; ')}`),
    ].join('\n'),
  announcement: (r) =>
    [
      r.pick(['COMMUNITY NOTICE', 'Save the Date!', 'Announcement', 'Office Closure Notice']),
      '',
      sentences(r, ['Join us for our annual summer picnic in the park.', 'The office will be closed on Monday for the public holiday.', 'Bring a dish to share and your favourite games.', 'The swimming pool will reopen after maintenance next week.', 'All are welcome, admission is free.', 'Please register by the end of the month.'], 2, 4),
      `When: ${formatDate(randomDate(r), 'long')}`,
    ].join('\n'),
  story: (r) =>
    sentences(r, ['The old lighthouse keeper climbed the stairs one last time.', 'Nobody in the village remembered when the clock had stopped.', 'She opened the letter, then closed it again without reading a word.', 'Outside, the snow kept falling as if it had nowhere else to be.', 'He laughed, and for a moment the kitchen felt warm again.', 'The train pulled away and the platform emptied.', 'Somewhere a dog barked, and the spell was broken.', 'By morning the river had risen over the bridge.'], 4, 7),
  encyclopedia: (r) =>
    [
      r.pick(['The Danube', 'Mount Kilimanjaro', 'The Printing Press', 'Honeybees', 'The Roman Empire']),
      '',
      sentences(r, ['It is one of the best known examples of its kind in the world.', 'Its origins can be traced back several thousand years.', 'The name is thought to derive from an ancient word for water.', 'Scholars disagree about its exact age.', 'It played an important role in the economy of the region.', 'Today it attracts visitors from around the world.', 'It is home to hundreds of species of plants and animals.', 'The first written description dates from the fifteenth century.'], 3, 6),
    ].join('\n'),
  product: (r) =>
    [
      r.pick(['UltraLight Trekking Poles', 'Bamboo Bath Towel Set', 'Smart LED Bulb (2-pack)', 'Stainless Steel Water Bottle', 'Noise-Cancelling Headphones']),
      '',
      sentences(r, ['Designed for everyday adventures.', 'Made from sustainable materials.', 'Lightweight, durable and easy to clean.', 'Pairs with your phone in seconds.', 'Available in five colours.', 'Machine washable at 40 degrees.', 'Backed by a two-year warranty.', 'Customers love its soft feel and quality.'], 3, 6),
    ].join('\n'),
  todo: (r) => [r.pick(['To do', 'Things to do this week', 'Shopping list', 'Packing list']), '', ...r.sample(['- pick up dry cleaning', '- book dentist', '- milk, eggs, bread', '- pay phone bill', '- passport', '- charger', '- renew car insurance', '- call Mum', '- buy stamps', '- sunglasses'], r.int(3, 7))].join('\n'),
  forum: (r) =>
    [
      r.pick(['Which tent for wild camping?', 'Help: sourdough not rising', 'Best beginner road bike?', 'Laptop fan noise after update']),
      `Posted by ${r.pick(['hillwalker', 'crumbqueen', 'spokes42', 'quietfan'])} ${r.int(2, 11)} hours ago`,
      '',
      sentences(r, ['Has anyone else had this problem?', 'I tried everything in the guides but no luck.', 'Any recommendations welcome, budget is limited.', 'Update: fixed it, thanks all!', 'I would go for the lighter one every time.', 'Same here, it started last week.'], 2, 4),
    ].join('\n'),
  press: (r) =>
    [
      r.pick(['PRESS RELEASE', 'News release', 'For release on publication']),
      `${company(r)} ${r.pick(['launches new app', 'appoints new chief executive', 'wins sustainability award', 'expands into Asia'])}`,
      sentences(r, ['The announcement was made at the annual conference.', 'The company expects to create fifty new jobs.', 'Customers will benefit from faster service.', '"We are delighted," said a spokesperson.', 'Further details will be announced in the spring.', 'Notes to editors: images are available on request.'], 3, 5),
    ].join('\n'),
  sports: (r) => [`${r.pick(['Saturday results', 'Match report', 'League table update'])}`, ...Array.from({ length: r.int(3, 6) }, () => `${r.pick(COMPANY_HEADS)} ${r.int(0, 4)} - ${r.int(0, 4)} ${r.pick(COMPANY_HEADS)}`), sentences(r, ['A late goal settled a tense match.', 'The visitors dominated possession.', 'Rain made conditions difficult.'], 1, 2)].join('\n'),
  notes: (r) =>
    [
      `Lecture ${r.int(1, 20)}: ${r.pick(['Photosynthesis', 'The French Revolution', 'Supply and Demand', 'Plate Tectonics', 'Introduction to Algorithms'])}`,
      '',
      ...r.sample(['- key idea: energy flows from the sun', '- causes: debt, inequality, bread prices', '- equilibrium where curves meet', '- plates move a few cm per year', '- big-O describes growth of running time', '- see chapter 4 for examples', '- exam question likely on this!', '- compare with last week\'s topic'], r.int(3, 6)),
    ].join('\n'),
};

/** The training corpus: `perLabel` documents for each category and subcategory (and each kind of `other`), from `seed`. */
export function trainingCorpus(seed = 20241126, perLabel = 30): TrainingDocument[] {
  const r = seededRandom(seed);
  const docs: TrainingDocument[] = [];
  const add = (category: string, subcategory: string | null, make: () => string, count = perLabel) => {
    for (let i = 0; i < count; i++) docs.push({ category, subcategory, text: addNoise(r, make(), r.pick([0, 0, 0.3, 0.6])) });
  };
  for (const sub of ['commercial', 'proforma', 'credit_note'] as const) add('invoice', sub, () => invoice(r, sub));
  for (const sub of ['retail', 'restaurant', 'transport'] as const) add('receipt', sub, () => receipt(r, sub));
  for (const sub of ['service', 'employment', 'lease', 'nda'] as const) add('contract', sub, () => contract(r, sub));
  for (const sub of ['financial', 'technical', 'progress'] as const) add('report', sub, () => report(r, sub));
  for (const sub of ['cover_letter', 'business', 'personal'] as const) add('letter', sub, () => letter(r, sub));
  add('resume', null, () => resume(r), perLabel * 3);
  add('spreadsheet', null, () => spreadsheet(r), perLabel * 3);
  for (const make of Object.values(OTHER_KINDS)) add('other', null, () => make(r), Math.ceil(perLabel / 2));
  return docs;
}
