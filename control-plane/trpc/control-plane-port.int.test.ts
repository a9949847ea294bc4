import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bunExecutable } from '../../scripts/stack/bun.ts';
import { startPortFixture, type PortFixture } from '../../test/port/port-fixture.ts';
import { runPortScenarios } from '../../test/port/port-scenarios.ts';

const UPLOAD_LIMIT = 4 * 1024 * 1024;

/** What every implementation of the port must give for the scenarios of test/port/port-scenarios.ts. */
function expectPortBehaviour(results: Awaited<ReturnType<typeof runPortScenarios>>) {
  expect(results.watch.statuses).toEqual(results.watch.expected);
  expect(results.watchErrors).toEqual({
    unauthenticated: { status: 401, code: 'UNAUTHORIZED' },
    forbidden: { status: 403, code: 'FORBIDDEN' },
    invalid: { status: 400, code: 'VALIDATION_ERROR', field: 'tenantId' },
  });
  expect(results.abort).toEqual({
    firstStatus: 'provisioning',
    listeningBeforeBreak: ['listen'],
    afterBreak: 'unlisten',
    listeningBeforeAbort: ['listen'],
    afterAbortNext: { done: true, value: undefined },
    afterAbort: 'unlisten',
  });
  const { web, node } = results.upload;
  expect(web).toMatchObject({ key: true, size: web.expectedSize, sha256: web.expectedSha256, storedSha256: web.expectedSha256, filename: 'quarterly report.pdf', contentType: 'application/pdf' });
  expect(node).toMatchObject({ size: 1024 * 1024 + 5, sha256: node.expectedSha256, contentType: 'text/plain; charset=utf-8' });
  expect(results.overLimit).toEqual({ outcome: { status: 413, code: 'FILE_TOO_LARGE' }, sourceCancelled: false, leftBehind: [] });
  expect(results.uploadErrors).toEqual({
    unauthenticated: { status: 401, code: 'UNAUTHORIZED' },
    forbidden: { status: 403, code: 'FORBIDDEN' },
    emptyFilename: { status: 400, code: 'VALIDATION_ERROR', field: 'filename' },
    badMeta: { status: 400, code: 'VALIDATION_ERROR', field: 'contentType' },
    leftBehind: [],
  });
}

/** Subscriptions and streamed uploads through both implementations of the port, over the real database and a real control-plane server. */
describe('control plane port: subscriptions and streamed uploads', () => {
  let fixture: PortFixture;
  beforeAll(async () => {
    fixture = await startPortFixture({ databaseUrl: inject('databaseUrl'), uploadLimitBytes: UPLOAD_LIMIT });
  });
  afterAll(() => fixture?.close());

  for (const mode of ['in-process', 'http'] as const) {
    it(`behaves alike ${mode}`, async () => {
      expectPortBehaviour(await runPortScenarios(fixture, fixture.ports[mode]));
    });
  }
});

/** The same scenarios on Bun (test/port/port-scenarios.bun.ts), through both implementations. */
describe('control plane port on Bun', () => {
  it('behaves alike in-process and over HTTP', async () => {
    const script = fileURLToPath(new URL('../../test/port/port-scenarios.bun.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(bunExecutable(), [script], {
      env: { ...process.env, SVC_PORT_TEST: JSON.stringify({ databaseUrl: inject('databaseUrl'), uploadLimitBytes: UPLOAD_LIMIT }) },
      maxBuffer: 16 * 1024 * 1024,
      timeout: 60_000,
    });
    const results = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(results.runtime).toMatch(/^bun \d/);
    expectPortBehaviour(results['in-process']);
    expectPortBehaviour(results.http);
  });
});
