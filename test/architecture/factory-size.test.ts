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

const files = execFileSync('git', ['ls-files', '-z', '--', 'control-plane/*.ts'], { cwd: ROOT, encoding: 'utf8' })
  .split('\0')
  .filter((file) => file && !file.endsWith('.test.ts') && !file.endsWith('.d.ts'));

/** Every exported `create*` function of `file` (declared, or a const arrow or function expression), with its length in lines. */
function factoriesOf(file: string, text = readFileSync(posix.join(ROOT, file), 'utf8')): Array<{ name: string; lines: number }> {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
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
    expect(factories.map((f) => f.name)).toEqual(
      expect.arrayContaining(['createDocumentsService', 'createDocumentJobs', 'createTenantsService', 'createServices', 'createRealtimeHub']),
    );
  });

  it(`keeps every exported create* factory of the control plane within ${MAX_LINES} lines`, () => {
    const over = factories
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file} ${f.name}: ${f.lines} lines`);
    expect(over, 'split the factory by caller (API service, workflow jobs, operator declarations) or into parts it composes').toEqual([]);
  });

  it('measures a factory from its first line to its last, however it is declared, and only exported create* ones', () => {
    const body = Array.from({ length: 149 }, (_, i) => `  const a${i} = ${i};`).join('\n');
    const text = [
      `export function createDeclared() {\n${body}\n}`,
      `export const createArrow = () => {\n${body}\n};`,
      `export const createExpression = function () {\n${body}\n  return 0;\n};`,
      `function createPrivate() {\n${body}\n  return 0;\n}`,
      `export function makeSomething() {\n${body}\n  return 0;\n}`,
    ].join('\n');
    expect(factoriesOf('sample.ts', text)).toEqual([
      { name: 'createDeclared', lines: 151 },
      { name: 'createArrow', lines: 151 },
      { name: 'createExpression', lines: 152 },
    ]);
  });
});
