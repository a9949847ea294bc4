import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkHistory, writeHistory, type History, type HistoryOperation } from './checker.ts';

/**
 * The checker's model of a versioned resource, on crafted histories: it must refuse the histories a
 * lost update or a torn batch produces, and accept every history that ambiguous answers explain.
 */

const dir = mkdtempSync(join(tmpdir(), 'svc-linearizability-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
const check = (history: History, visualize?: string) => {
  const file = join(dir, `history-${++files}.jsonl`);
  writeHistory(file, history);
  return checkHistory(file, { visualize, log: (msg) => process.stderr.write(`[linearizability-checker] ${msg}\n`) });
};

const initial = { a: { version: 1, data: 'a0' }, b: { version: 1, data: 'b0' } };
const op = (client: number, call: number, ret: number, input: HistoryOperation['input'], output: HistoryOperation['output']): HistoryOperation => ({ client, call, return: ret, input, output });
const read = (client: number, call: number, ret: number, id: string, version: number, data: string) => op(client, call, ret, { op: 'read', id }, { status: 'ok', version, data });

describe('the linearizability checker', () => {
  it('refuses two successes on the same expected version, says why and draws the history', async () => {
    const visualization = join(dir, 'lost-update.html');
    const result = await check(
      {
        initial,
        operations: [
          op(0, 0, 10, { op: 'write', id: 'a', version: 1, data: 'x' }, { status: 'ok', versions: [2] }),
          op(1, 2, 12, { op: 'write', id: 'a', version: 1, data: 'y' }, { status: 'ok', versions: [2] }),
          read(2, 20, 30, 'a', 2, 'y'),
        ],
      },
      visualization,
    );
    expect(result.verdict).toBe('violation');
    expect(result.message).toMatch(/^not linearizable: no order of the 3 operations on a explains every answer/);
    expect(result.message).toMatch(/write\(a at v1 := "[xy]"\) -> ok \[2\]/);
    expect(existsSync(visualization)).toBe(true);
    expect(readFileSync(visualization, 'utf8')).toContain('<html');
  }, 300_000);

  it('refuses a read that misses a write acknowledged before it began', async () => {
    const result = await check({
      initial,
      operations: [op(0, 0, 10, { op: 'write', id: 'a', data: 'x' }, { status: 'ok', versions: [2] }), read(1, 11, 20, 'a', 1, 'a0')],
    });
    expect(result.verdict).toBe('violation');
  });

  it('refuses a batch seen half applied, and a conflict answered while the version matched', async () => {
    const batch = op(0, 0, 10, { op: 'batch', items: [{ id: 'a', version: 1, data: 'a1' }, { id: 'b', version: 1, data: 'b1' }] }, { status: 'ok', versions: [2, 2] });
    const torn = await check({ initial, operations: [batch, read(1, 20, 30, 'a', 2, 'a1'), read(1, 31, 40, 'b', 1, 'b0')] });
    expect(torn.verdict).toBe('violation');
    const falseConflict = await check({
      initial,
      operations: [op(0, 0, 10, { op: 'write', id: 'a', version: 1, data: 'x' }, { status: 'conflict' }), read(1, 20, 30, 'a', 1, 'a0')],
    });
    expect(falseConflict.verdict).toBe('violation');
  });

  it('accepts an ambiguous write that took effect, even after its client gave up, and one that never did', async () => {
    const tookEffect = await check({
      initial,
      operations: [
        op(0, 0, 10, { op: 'write', id: 'a', version: 1, data: 'x' }, { status: 'unknown' }),
        read(1, 20, 30, 'a', 1, 'a0'),
        read(1, 40, 50, 'a', 2, 'x'),
        op(1, 60, 70, { op: 'write', id: 'a', version: 1, data: 'y' }, { status: 'conflict' }),
      ],
    });
    expect(tookEffect).toEqual({ verdict: 'linearizable', message: expect.stringMatching(/^linearizable: 4 operations on 2 resources/) });
    const never = await check({
      initial,
      operations: [
        op(0, 0, 10, { op: 'batch', items: [{ id: 'a', version: 1, data: 'a1' }, { id: 'b', version: 1, data: 'b1' }] }, { status: 'unknown' }),
        op(1, 20, 30, { op: 'write', id: 'b', version: 1, data: 'b2' }, { status: 'ok', versions: [2] }),
        read(1, 40, 50, 'a', 1, 'a0'),
      ],
    });
    expect(never.verdict).toBe('linearizable');
    // Linearizable answers still have to agree with each other: the ambiguous batch cannot be both.
    const both = await check({
      initial,
      operations: [
        op(0, 0, 10, { op: 'batch', items: [{ id: 'a', version: 1, data: 'a1' }, { id: 'b', version: 1, data: 'b1' }] }, { status: 'unknown' }),
        read(1, 20, 30, 'a', 2, 'a1'),
        read(1, 40, 50, 'b', 1, 'b0'),
      ],
    });
    expect(both.verdict).toBe('violation');
  });

  it('names the line of a history it cannot read', async () => {
    const file = join(dir, 'unreadable.jsonl');
    writeFileSync(file, `${JSON.stringify({ initial })}\n${JSON.stringify(op(0, 0, 1, { op: 'read', id: 'c' }, { status: 'ok', version: 1, data: '' }))}\n{"client": 0, "call": 0, "return": 1, "input": {"op": "delete", "id": "a"}, "output": {"status": "ok"}}\n`);
    await expect(checkHistory(file)).rejects.toThrow(/cannot read the history in .*unreadable\.jsonl: line 3: op "delete" is none of read, write, batch/);
  });
});
