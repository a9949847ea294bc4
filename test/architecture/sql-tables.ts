import ts from 'typescript';

/**
 * The tables a TypeScript file's SQL names, found by a regex over the text of its string and
 * template literals (a template's `${…}` parts read as a placeholder that names no table). Simple
 * on purpose: a name counts only when it follows INSERT INTO, UPDATE, DELETE FROM, MERGE INTO,
 * COPY, TRUNCATE (writes) or FROM, JOIN, USING (reads), and only names in `known` count, so prose
 * and SQL keywords never do. A table named through `${…}` or second in a comma list is not seen.
 */

export interface TableUse {
  table: string;
  kind: 'read' | 'write';
}

/** A literal is SQL when it is a tagged template's text or reads like a statement. */
const LOOKS_LIKE_SQL = /\b(select\b|insert\s+into\b|update\s+\w+\s+(\w+\s+)?set\b|delete\s+from\b|merge\s+into\b|truncate\b|copy\s+\w+\s+(from|to)\b)/i;

/** The SQL texts of a source file: every tagged template, and every other literal that reads like SQL. */
export function sqlTextsOf(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const texts: string[] = [];
  const templateText = (template: ts.TemplateLiteral) =>
    ts.isNoSubstitutionTemplateLiteral(template) ? template.text : [template.head.text, ...template.templateSpans.map((span) => span.literal.text)].join(' ${} ');
  const visit = (node: ts.Node) => {
    if (ts.isTaggedTemplateExpression(node)) {
      texts.push(templateText(node.template));
      // Its spans may hold SQL of their own (a nested fragment); its text is read once, above.
      if (ts.isTemplateExpression(node.template)) node.template.templateSpans.forEach((span) => visit(span.expression));
      return;
    } else if (ts.isTemplateExpression(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isStringLiteral(node)) {
      const literal = ts.isTemplateExpression(node) || ts.isNoSubstitutionTemplateLiteral(node) ? templateText(node) : node.text;
      if (LOOKS_LIKE_SQL.test(literal)) texts.push(literal);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return texts;
}

const NAME = String.raw`(?:"?public"?\s*\.\s*)?"?([a-z_][a-z0-9_]*)"?`;
const WRITES = [
  String.raw`\binsert\s+into\s+${NAME}`,
  // Not `for update`, `for no key update` or `do update`: those lock or resolve a conflict.
  String.raw`(?<!\b(?:for|key|do)\s+)\bupdate\s+(?:only\s+)?${NAME}`,
  String.raw`\bdelete\s+from\s+(?:only\s+)?${NAME}`,
  String.raw`\bmerge\s+into\s+${NAME}`,
  String.raw`\bcopy\s+${NAME}`,
  String.raw`\btruncate\s+(?:table\s+)?(?:only\s+)?${NAME}`,
].map((pattern) => new RegExp(pattern, 'gi'));
const READ = new RegExp(String.raw`\b(?:from|join|using)\s+(?:only\s+|lateral\s+)?${NAME}`, 'gi');

/** The known tables an SQL text writes and reads, in order of appearance, each use once. */
export function tableUses(sql: string, known: ReadonlySet<string>): TableUse[] {
  // Quoted strings and comments name no table.
  let text = sql.replace(/'(?:[^']|'')*'/g, "''").replace(/--[^\n]*/g, ' ');
  const uses: TableUse[] = [];
  for (const pattern of WRITES) {
    text = text.replace(pattern, (match: string, name: string) => {
      uses.push({ table: name.toLowerCase(), kind: 'write' });
      // The written name (and DELETE's FROM) must not read as a read below.
      return ' '.repeat(match.length);
    });
  }
  for (const match of text.matchAll(READ)) uses.push({ table: match[1]!.toLowerCase(), kind: 'read' });
  const seen = new Set<string>();
  return uses.filter((use) => {
    const key = `${use.kind} ${use.table}`;
    if (!known.has(use.table) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** What a file may do with a table: own it, read a published view, or read through a listed exception. */
export interface Ownership {
  /** Table -> the folder (from the repository root) that owns it. */
  owners: Readonly<Record<string, string>>;
  /** Views other domains may read -> the folder that publishes them. */
  views: Readonly<Record<string, string>>;
  /** `file table` -> why that file reads another domain's table directly. */
  allowedReads: Readonly<Record<string, string>>;
}

/** The uses in `file`'s SQL that the ownership refuses, as `file: write|read table (owner)`. */
export function refusedUses(file: string, sqlTexts: readonly string[], ownership: Ownership): string[] {
  const known = new Set([...Object.keys(ownership.owners), ...Object.keys(ownership.views)]);
  const owns = (table: string) => {
    const owner = ownership.owners[table] ?? ownership.views[table]!;
    return file.startsWith(`${owner}/`);
  };
  const refused = new Set<string>();
  for (const sql of sqlTexts) {
    for (const use of tableUses(sql, known)) {
      if (owns(use.table)) continue;
      if (use.kind === 'read' && (use.table in ownership.views || `${file} ${use.table}` in ownership.allowedReads)) continue;
      refused.add(`${file}: ${use.kind} ${use.table} (${ownership.owners[use.table] ?? ownership.views[use.table]})`);
    }
  }
  return [...refused];
}
