import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PUBLISHED_VIEWS, TABLE_OWNERS } from '../../control-plane/db/table-owners.ts';
import { refusedUses, sqlTextsOf } from './sql-tables.ts';

/**
 * The import boundaries between the platform's parts: what the edge, the CLI and the workflows
 * may import, which repositories a control-plane domain may read, what the operator may use, and
 * that the domains import one another without cycles. The control-plane folders are read from the
 * tree, so a new folder is covered as soon as it exists. Checked over the import
 * graph of every TypeScript file git tracks (static imports and re-exports, dynamic `import()`,
 * `import('…')` types), with relative specifiers resolved to repository paths. The SQL of every
 * domain's code is checked against the tables' owners (control-plane/db/table-owners.ts).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Import {
  /** The importing file, relative to the repository root. */
  file: string;
  /** The specifier as written. */
  specifier: string;
  /** The repository path it names (relative specifiers), else the specifier itself (a package). */
  target: string;
  /** `import type`, `export type`, every named element `type`, or an `import('…')` type. */
  typeOnly: boolean;
}

/** Every import of `file`'s source text. */
function importsOf(file: string, text: string): Import[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: Import[] = [];
  const add = (specifier: ts.Expression | undefined, typeOnly: boolean) => {
    if (!specifier || !ts.isStringLiteralLike(specifier)) return;
    const name = specifier.text;
    const target = name.startsWith('.') ? posix.normalize(posix.join(posix.dirname(file), name)) : name;
    found.push({ file, specifier: name, target, typeOnly });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const everyNamedIsType =
        !!clause && !clause.name && !!bindings && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier, !!clause && (clause.isTypeOnly || everyNamedIsType));
    } else if (ts.isExportDeclaration(node)) {
      const clause = node.exportClause;
      const everyNamedIsType = !!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier, node.isTypeOnly || everyNamedIsType);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const files = execFileSync('git', ['ls-files', '-z', '--', '*.ts'], { cwd: ROOT, encoding: 'utf8' })
  .split('\0')
  .filter((file) => file && !file.startsWith('node_modules/'));
const graph = files.flatMap((file) => importsOf(file, readFileSync(posix.join(ROOT, file), 'utf8')));

const isTest = (file: string) => file.endsWith('.test.ts');
/** `file -> import`, the import as the repository path it names. */
const show = (violations: readonly Import[]) => violations.map((v) => `${v.file} -> ${v.target}`);

/** The one module of the control plane that the edge and the CLI import. */
const CONTRACTS = 'control-plane/contracts.ts';

/**
 * Modules without side effects, I/O or non-determinism that workflows may import for their values:
 * the workflow bundle runs them in Temporal's deterministic sandbox.
 */
const PURE_MODULES = [
  'control-plane/temporal/workflow-contract.ts',
  'control-plane/storage/storage.constants.ts',
  'control-plane/orchestrate/templates.ts',
];
/** Packages workflows may import values from: the workflow SDK, and the shared types and helpers it builds on. */
const WORKFLOW_PACKAGES = ['@temporalio/workflow', '@temporalio/common'];

/** The folder of a control-plane file (`control-plane/tenants/x.ts` -> `tenants`); undefined outside one. */
function domainOf(path: string): string | undefined {
  const parts = path.split('/');
  return parts[0] === 'control-plane' && parts.length > 2 ? parts[1] : undefined;
}

/** The folders under control-plane/, as the tracked files name them. */
const FOLDERS = [...new Set(files.map(domainOf).filter((folder) => folder !== undefined))].sort();
/** The folder of the Kubernetes operator: a caller of the domains, with a rule of its own. */
const OPERATOR = 'operator';
/**
 * The composition root (control-plane/app/): the root router, the service wiring, the server and
 * the start-up. It imports the domains, so nothing below it may import it.
 */
const APP = 'app';
/**
 * Who may import the composition root: the process entry point (main.ts), the development scripts,
 * the tests, and control-plane/contracts.ts, which re-exports the root router's type and the
 * control plane's client for the edge and the CLI.
 */
const mayImportApp = (file: string) =>
  domainOf(file) === APP || file === CONTRACTS || file === 'main.ts' || file.startsWith('scripts/') || file.startsWith('test/') || isTest(file);
/** Whether a folder holds a repository or a service (tests aside): what makes it a domain. */
const ownsSomething = (folder: string) =>
  files.some((file) => domainOf(file) === folder && !isTest(file) && /\.(repo|service)\.ts$/.test(file));
/** The domains: the folders that hold a repository or a service. */
const DOMAINS = FOLDERS.filter((folder) => folder !== OPERATOR && folder !== APP && ownsSomething(folder));
/**
 * Shared machinery and adapters (db, query, trpc, temporal, ai, extract...): the folders other than
 * the composition root and the operator that hold neither a repository nor a service. Any domain
 * may use them; they import no domain, nor the operator, the composition root or the contracts.
 */
const MACHINERY = new Set(FOLDERS.filter((folder) => folder !== OPERATOR && folder !== APP && !DOMAINS.includes(folder)));

describe('import boundaries', () => {
  it('finds the imports of every tracked TypeScript file', () => {
    expect(files).toContain('control-plane/contracts.ts');
    expect(graph.filter((i) => i.file === 'api-edge/control-plane-http.ts').length).toBeGreaterThan(0);
  });

  it('reads the control-plane folders from the tree: the domains, the shared machinery and the operator', () => {
    expect(FOLDERS).toEqual(expect.arrayContaining([OPERATOR, APP]));
    expect(DOMAINS).toEqual(expect.arrayContaining(['tenants', 'resources', 'documents', 'storage']));
    expect([...MACHINERY]).toEqual(expect.arrayContaining(['db', 'trpc', 'temporal']));
    expect([...DOMAINS, ...MACHINERY, OPERATOR, APP].sort()).toEqual(FOLDERS);
    expect(files, 'every module listed as pure exists').toEqual(expect.arrayContaining(PURE_MODULES));
  });

  it('lets api-edge and cli import from control-plane only control-plane/contracts.ts (tests excepted)', () => {
    const violations = graph.filter(
      (i) => (i.file.startsWith('api-edge/') || i.file.startsWith('cli/')) && !isTest(i.file) && i.target.startsWith('control-plane/') && i.target !== CONTRACTS,
    );
    expect(show(violations), `import ${CONTRACTS} instead (re-export what is needed there)`).toEqual([]);
  });

  it('lets workflows import values only from the workflow SDK, other workflow files and pure modules', () => {
    const allowed = (i: Import) =>
      i.typeOnly || WORKFLOW_PACKAGES.includes(i.target) || i.target.startsWith('workers/workflows/') || PURE_MODULES.includes(i.target);
    const violations = graph.filter((i) => i.file.startsWith('workers/workflows/') && !isTest(i.file) && !allowed(i));
    expect(show(violations), "workflows run in Temporal's deterministic sandbox: import these as types, or list a pure module in PURE_MODULES").toEqual([]);
  });

  it('keeps the modules listed as pure free of imports of anything but types and other pure modules', () => {
    const violations = graph.filter(
      (i) => PURE_MODULES.includes(i.file) && !i.typeOnly && !WORKFLOW_PACKAGES.includes(i.target) && !PURE_MODULES.includes(i.target),
    );
    expect(show(violations), 'a module that workflows import must stay pure').toEqual([]);
  });

  it('lets only the entry points, scripts, tests and control-plane/contracts.ts import the composition root control-plane/app/', () => {
    const violations = graph.filter((i) => domainOf(i.target) === APP && !mayImportApp(i.file));
    expect(show(violations), 'the composition root imports the domains, never the other way round: take what is needed as a port in your deps').toEqual([]);
  });

  it('keeps the shared machinery free of imports of the domains, the operator, the composition root and the contracts (tests excepted)', () => {
    const violations = graph.filter((i) => {
      const from = domainOf(i.file);
      if (isTest(i.file) || from === undefined || !MACHINERY.has(from)) return false;
      const to = domainOf(i.target);
      return i.target === CONTRACTS || (to !== undefined && !MACHINERY.has(to));
    });
    expect(show(violations), 'machinery sits below the domains: move the shared part down into the machinery, or have the domain pass it in').toEqual([]);
  });

  // Tests may set up another domain's rows through its repository.
  const repoImports = graph.filter((i) => {
    if (isTest(i.file)) return false;
    const from = domainOf(i.file);
    const to = domainOf(i.target);
    return from !== undefined && to !== undefined && from !== to && i.target.endsWith('.repo.ts');
  });

  it("keeps every control-plane domain out of another domain's repository (tests excepted)", () => {
    expect(show(repoImports), "call that domain's service instead of its repository").toEqual([]);
  });

  it('lets the operator use the domains through their services, never a repository or the database (tests excepted)', () => {
    const violations = graph.filter(
      (i) => domainOf(i.file) === OPERATOR && !isTest(i.file) && (i.target.endsWith('.repo.ts') || domainOf(i.target) === 'db'),
    );
    expect(show(violations), "the operator calls the domain's service; the service reads and writes the tables").toEqual([]);
  });

  it('keeps the domain folders free of cycles (tests excepted)', () => {
    const edges = new Map<string, Set<string>>();
    for (const i of graph) {
      const from = domainOf(i.file);
      const to = domainOf(i.target);
      if (isTest(i.file) || !from || !to || from === to || MACHINERY.has(from) || MACHINERY.has(to)) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
    }
    const cycles: string[] = [];
    const visit = (domain: string, path: string[]) => {
      for (const next of edges.get(domain) ?? []) {
        if (next === path[0]) cycles.push([...path, next].join(' -> '));
        else if (!path.includes(next) && next > path[0]!) visit(next, [...path, next]);
      }
    };
    for (const domain of edges.keys()) visit(domain, [domain]);
    expect(cycles, 'a schema both domains need belongs in the lower one').toEqual([]);
  });
});

/**
 * Reads of another domain's table that do not go through a view its owner publishes, each with
 * its reason: `'file table': 'why'`. Keep it short; a view in the owner's migration is the way.
 */
const ALLOWED_READS: Readonly<Record<string, string>> = {};

/** The files whose SQL the ownership binds: every domain's code, the operator's and the edge's (tests excepted). */
const sqlFiles = files.filter((file) => {
  if (isTest(file)) return false;
  const folder = domainOf(file);
  return (folder !== undefined && !MACHINERY.has(folder)) || file.startsWith('api-edge/');
});

describe('table ownership', () => {
  const ownership = { owners: TABLE_OWNERS, views: PUBLISHED_VIEWS, allowedReads: ALLOWED_READS };
  const refused = sqlFiles.flatMap((file) => refusedUses(file, sqlTextsOf(file, readFileSync(posix.join(ROOT, file), 'utf8')), ownership));

  it('reads the SQL of the domains', () => {
    expect(sqlFiles).toEqual(expect.arrayContaining(['control-plane/tenants/tenants.repo.ts', 'control-plane/resources/resources.repo.ts']));
    const tenantsSql = sqlTextsOf('tenants.repo.ts', readFileSync(posix.join(ROOT, 'control-plane/tenants/tenants.repo.ts'), 'utf8'));
    expect(tenantsSql.some((sql) => /update tenants set/.test(sql))).toBe(true);
  });

  it("writes a table only from its owner's folder, and reads another domain's only through a view it publishes", () => {
    expect(refused, "call the owner's service (a port the wiring passes in), or read a view the owner publishes (control-plane/db/table-owners.ts)").toEqual([]);
  });

  it('lists each allowed read with a reason, for a table another domain owns', () => {
    for (const [entry, reason] of Object.entries(ALLOWED_READS)) {
      const [file, table] = entry.split(' ');
      expect(files, entry).toContain(file);
      expect(table! in TABLE_OWNERS && !file!.startsWith(`${TABLE_OWNERS[table as keyof typeof TABLE_OWNERS]}/`), entry).toBe(true);
      expect(reason.length, entry).toBeGreaterThan(10);
    }
    expect(Object.keys(ALLOWED_READS).length, 'publish a view instead of growing the list').toBeLessThanOrEqual(5);
  });
});
