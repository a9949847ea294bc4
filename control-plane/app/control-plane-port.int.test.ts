import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHttpControlPlane } from '../../api-edge/control-plane-http.ts';
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
  // The Bun process is given 60 s (it starts a fixture of its own); the test waits as long.
  it('behaves alike in-process and over HTTP', { timeout: 90_000 }, async () => {
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

/** Resident and peak resident memory of a process, in bytes (Linux). */
async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/**
 * The control-plane server reads an upload only as fast as the blob store writes it: its peak memory
 * grows by what the garbage collector lets pile up (about 10 MiB for 10 MB, 30 MiB for 50 MB, 200 MB
 * or 400 MB on Node; 36 to 66 MiB on Bun for 200 or 400 MB, measured alone), not by the body's size.
 * That slack is larger beside a full test run (160 MiB on Node), so the test compares two uploads:
 * a body four times larger must not raise the peak by a quarter of the difference.
 */
describe('a streamed upload through the HTTP port', () => {
  const SMALL_UPLOAD = 100 * 1024 * 1024;
  const UPLOAD = 400 * 1024 * 1024;
  for (const runtime of ['node', 'bun'] as const) {
    it(`leaves the control plane's peak memory far below the body's size (${runtime})`, { timeout: 90_000 }, async () => {
      const script = fileURLToPath(new URL('../../test/port/control-plane-child.ts', import.meta.url));
      const [command, args] = runtime === 'node' ? [process.execPath, ['--expose-gc', '--import', 'tsx', script]] : [bunExecutable(), [script]];
      const child = spawn(command, args, {
        env: { ...process.env, SVC_PORT_TEST: JSON.stringify({ databaseUrl: inject('databaseUrl'), uploadLimitBytes: 2 * UPLOAD }) },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = once(child, 'exit');
      try {
        const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
        const started = JSON.parse(line) as { url: string; callerToken: string; token: string; pid: number };
        const port = createHttpControlPlane(started.url, started.callerToken);
        const warmup = await port.upload({ identity: null, token: started.token }, 'uploads', 'put', { stream: new Blob([randomBytes(1024 * 1024)]).stream(), meta: { filename: 'warm-up', contentType: 'application/octet-stream' } });
        expect(warmup.size).toBe(1024 * 1024);
        const before = await memoryOf(started.pid);
        const chunk = randomBytes(64 * 1024);
        const uploadOf = async (bytes: number) => {
          let sent = 0;
          const stream = new ReadableStream<Uint8Array>({
            pull(controller) {
              if (sent >= bytes) return controller.close();
              sent += chunk.byteLength;
              controller.enqueue(chunk);
            },
          }, { highWaterMark: 0 });
          const result = await port.upload({ identity: null, token: started.token }, 'uploads', 'put', { stream, meta: { filename: 'large.bin', contentType: 'application/octet-stream' } });
          expect(result.size).toBe(bytes);
          return memoryOf(started.pid);
        };
        const afterSmall = await uploadOf(SMALL_UPLOAD);
        const afterLarge = await uploadOf(UPLOAD);
        const slack = afterSmall.peak - before.rss;
        const more = afterLarge.peak - afterSmall.peak;
        const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
        console.error(`[${runtime}] control plane rss ${mib(before.rss)} MiB before; peak +${mib(slack)} MiB over a ${SMALL_UPLOAD / 2 ** 20} MiB upload, +${mib(more)} MiB more over a ${UPLOAD / 2 ** 20} MiB one`);
        expect(more).toBeLessThan((UPLOAD - SMALL_UPLOAD) / 4);
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    });
  }
});
