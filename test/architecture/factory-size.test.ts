import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * No exported `create*` factory of the control plane runs over 150 lines: a factory that grows
 * past that serves several callers at once and is split by caller (docs/architecture.md).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAX_LINES = 150;

/**
 * Factories still over the limit, with the size each may not exceed: each is to be split by
 * caller as documents and tenants were (its API service, its workflow jobs, its operator
 * declarations, the parts they share). An entry may only shrink, and goes once under the limit.
 */
const STILL_OVER: Record<string, number> = {
  'control-plane/realtime/realtime-hub.ts createRealtimeHub': 241,
};

const files = execFileSync('git', ['ls-files', '-z', '--', 'control-plane/*.ts'], { cwd: ROOT, encoding: 'utf8' })
  .split('\0')
  .filter((file) => file && !file.endsWith('.test.ts') && !file.endsWith('.d.ts'));

/** Every exported `create*` function of `file` (declared, or a const arrow or function expression), with its length in lines. */
function factoriesOf(file: string): Array<{ name: string; lines: number }> {
  const source = ts.createSourceFile(file, readFileSync(posix.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const lines = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getEnd()).line - source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const exported = (node: ts.Node) => ts.canHaveModifiers(node) && !!ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const found: Array<{ name: string; lines: number }> = [];
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name && exported(statement) && /^create[A-Z]/.test(statement.name.text)) {
      found.push({ name: statement.name.text, lines: lines(statement) });
    } else if (ts.isVariableStatement(statement) && exported(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        const init = declaration.initializer;
        if (ts.isIdentifier(declaration.name) && /^create[A-Z]/.test(declaration.name.text) && init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) {
          found.push({ name: declaration.name.text, lines: lines(declaration) });
        }
      }
    }
  }
  return found;
}

const factories = files.flatMap((file) => factoriesOf(file).map((factory) => ({ file, ...factory })));

describe('factory size', () => {
  it('finds the exported factories of the control plane', () => {
    expect(factories.map((f) => f.name)).toEqual(expect.arrayContaining(['createDocumentsService', 'createDocumentJobs', 'createTenantsService', 'createServices']));
  });

  it(`keeps every exported create* factory of the control plane within ${MAX_LINES} lines`, () => {
    const over = factories
      .filter((f) => f.lines > Math.max(MAX_LINES, STILL_OVER[`${f.file} ${f.name}`] ?? 0))
      .map((f) => `${f.file} ${f.name}: ${f.lines} lines`);
    expect(over, 'split the factory by caller (API service, workflow jobs, operator declarations) or into parts it composes').toEqual([]);
  });

  it('lists as still over the limit only factories that are', () => {
    const size = new Map(factories.map((f) => [`${f.file} ${f.name}`, f.lines]));
    const stale = Object.keys(STILL_OVER).filter((key) => (size.get(key) ?? 0) <= MAX_LINES);
    expect(stale, 'these are within the limit now (or gone): remove them from STILL_OVER').toEqual([]);
  });
});
