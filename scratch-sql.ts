import { buildListStatements } from './control-plane/resources/list-statements.ts';
const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 500 }, status: { type: 'string', maxLength: 100 }, budget: { type: 'number' } } };
const s = buildListStatements(process.argv[2]!, { type: 'project', filter: { status: 'active', 'budget.gte': '1000' }, sort: '-budget,createdAt', limit: 20 }, schema);
let text = s.page.text; s.page.values.forEach((v, i) => { text = text.replace(new RegExp(`\\$${i + 1}(?!\\d)`, 'g'), `'${Array.isArray(v) ? `{${v}}` : v}'`); });
let count = s.count.text; s.count.values.forEach((v, i) => { count = count.replace(new RegExp(`\\$${i + 1}(?!\\d)`, 'g'), `'${v}'`); });
console.log((text + ";").replace(/\n/g," ")); console.log(count + ";");
