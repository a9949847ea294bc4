import { readFileSync } from 'node:fs';

/**
 * The shell blocks of a Markdown guide and what each is expected to do, read from the HTML comment
 * on the line above its fence (a reader sees the comment in the source and nothing in the page):
 *
 * - `<!-- expect: 200 201 200 -->`: run it; its `curl` calls answer these statuses, in order, and
 *   every other command succeeds (exit code 0);
 * - `<!-- expect: success -->`: run it; every command succeeds;
 * - either followed by `; prints <text>`: what it prints holds that text (`<!-- expect: 200; prints budget: 5000 -->`);
 * - `<!-- not run: <reason> -->`: shown only (it installs something globally, opens a browser, needs a cluster).
 */

export interface TourBlock {
  file: string;
  /** Line of the opening fence, counted from 1. */
  line: number;
  code: string;
  expect: { run: true; statuses: number[]; prints?: string } | { run: false; reason: string } | undefined;
}

const FENCE = /^(`{3,}|~{3,})\s*([\w-]*)/;
const SHELL = new Set(['sh', 'bash', 'shell']);
const EXPECT = /^<!--\s*expect:\s*(.*?)\s*-->$/;
const NOT_RUN = /^<!--\s*not run:\s*(.*?)\s*-->$/;

function expectationOf(comment: string | undefined, where: string): TourBlock['expect'] {
  if (!comment) return undefined;
  const notRun = NOT_RUN.exec(comment);
  if (notRun) return { run: false, reason: notRun[1]! };
  const expectation = EXPECT.exec(comment)?.[1];
  if (expectation === undefined) return undefined;
  const [expected, printed] = expectation.split(/;\s*prints\s+/);
  const prints = printed ? { prints: printed } : {};
  if (expected === 'success') return { run: true, statuses: [], ...prints };
  const statuses = expected!.split(/[\s,]+/).map(Number);
  if (!statuses.every((s) => Number.isInteger(s) && s >= 100 && s < 600)) throw new Error(`${where}: "${comment}" names no HTTP statuses (nor "success")`);
  return { run: true, statuses, ...prints };
}

/** The shell code blocks of `file` (a path relative to the working directory), each with its expectation, in order. */
export function tourBlocks(file: string): TourBlock[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: TourBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, fence, lang] = open;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.startsWith(fence!)) end++;
    if (SHELL.has(lang!)) {
      let above = i - 1;
      while (above >= 0 && lines[above]!.trim() === '') above--;
      const comment = above >= 0 ? lines[above]!.trim() : undefined;
      blocks.push({ file, line: i + 1, code: lines.slice(i + 1, end).join('\n'), expect: expectationOf(comment, `${file}:${i + 1}`) });
    }
    i = end;
  }
  return blocks;
}
