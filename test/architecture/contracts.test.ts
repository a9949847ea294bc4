import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * control-plane/contracts.ts is the control plane's boundary: it exports what the edge, the workers
 * and the start-up scripts import from the control plane, and nothing else, so that what crosses
 * the boundary can be read in one place.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CONTRACTS = 'control-plane/contracts.ts';

const files = execFileSync('git', ['ls-files', '-z', '--', '*.ts'], { cwd: ROOT, encoding: 'utf8' })
  .split('\0')
  .filter((file) => file && !file.startsWith('control-plane/'));
const parse = (file: string) => ts.createSourceFile(file, readFileSync(posix.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);

/** The names the barrel exports. */
function exported(): string[] {
  const names: string[] = [];
  ts.forEachChild(parse(CONTRACTS), (node) => {
    if (ts.isExportDeclaration(node) && node.exportClause && ts.isNamedExports(node.exportClause)) names.push(...node.exportClause.elements.map((e) => e.name.text));
  });
  return names;
}

/** The names files outside the control plane import from the barrel. */
function imported(): Set<string> {
  const names = new Set<string>();
  for (const file of files) {
    ts.forEachChild(parse(file), (node) => {
      if (!(ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) || !node.moduleSpecifier || !ts.isStringLiteral(node.moduleSpecifier)) return;
      if (posix.normalize(posix.join(posix.dirname(file), node.moduleSpecifier.text)) !== CONTRACTS) return;
      const bindings = ts.isImportDeclaration(node) ? node.importClause?.namedBindings : node.exportClause;
      if (bindings && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings))) for (const e of bindings.elements) names.add((e.propertyName ?? e.name).text);
    });
  }
  return names;
}

describe('the contracts barrel', () => {
  it('exports only what some file outside the control plane imports', () => {
    const used = imported();
    expect(used.size).toBeGreaterThan(0);
    expect(exported().filter((name) => !used.has(name)), `remove these from ${CONTRACTS}: nothing outside the control plane imports them`).toEqual([]);
  });
});
