import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { toErrorResponse } from '../../api-edge/errors.ts';
import type { ControlPlane } from '../../control-plane/contracts.ts';
import { insertTenant } from '../../control-plane/tenants/tenants.repo.ts';
import { until } from '../harness/until.ts';
import type { PortFixture } from './port-fixture.ts';

/** The status and error body the edge would answer for what a call threw (or `ok`). */
async function outcome(attempt: () => Promise<unknown>): Promise<{ status: number; code?: string; field?: unknown } | 'ok'> {
  try {
    await attempt();
    return 'ok';
  } catch (error) {
    const { status, body } = toErrorResponse(error);
    return { status, code: body.error.code, ...(body.error.details?.field ? { field: body.error.details.field } : {}) };
  }
}

const first = (values: AsyncIterable<unknown>) => values[Symbol.asyncIterator]().next();

/** Bytes in chunks from a pull-based web stream that records whether it was cancelled and how much was read. */
function byteSource(chunks: Uint8Array[]) {
  const state = { cancelled: false, pulled: 0 };
  let next = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (next === chunks.length) return controller.close();
        state.pulled += chunks[next]!.byteLength;
        controller.enqueue(chunks[next++]!);
      },
      cancel() {
        state.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, state };
}

const chunksOf = (total: number, size = 64 * 1024) => Array.from({ length: Math.ceil(total / size) }, (_, i) => randomBytes(Math.min(size, total - i * size)));
const sha256 = (chunks: Uint8Array[]) => chunks.reduce((hash, chunk) => hash.update(chunk), createHash('sha256')).digest('hex');

/**
 * The same calls through one implementation of the port, with results as plain data: the test
 * asserts them for each implementation, in Node and in Bun alike.
 */
export async function runPortScenarios(fixture: PortFixture, port: ControlPlane) {
  const { db, services, tenantIds } = fixture;
  const acmeAdmin = await fixture.as('admin@acme.test');
  const globexAdmin = await fixture.as('admin@globex.test');
  const acmeId = tenantIds.get('acme')!;

  /** A new child tenant of acme, still provisioning. */
  const provisioningChild = async () => {
    const slug = `watch-${randomUUID().slice(0, 8)}`;
    return db.system((tx) => insertTenant(tx, { slug, name: slug, domains: [], usecase: 'generic', starterTemplate: 'blank-vertical-template', homeRegion: 'eu', parentId: acmeId }));
  };
  /** The last statement of this fixture's LISTEN connection: `listen ...` while someone listens, `unlisten ...` once the last one stopped. */
  const listener = async () => {
    const rows = await db.sql<{ query: string }[]>`
      select query from pg_stat_activity
      where application_name = ${fixture.application} and pid <> pg_backend_pid() and query ~* '^(un)?listen '`;
    return rows.map((r) => r.query.split(' ')[0]!.toLowerCase());
  };
  const released = async () => (await until(listener, (state) => state.length === 1 && state[0] === 'unlisten', 10_000))[0];

  // Subscriptions: values until the status is final; errors before the first value; ending early.
  const watched = await provisioningChild();
  const statuses: unknown[] = [];
  for await (const status of port.subscription(acmeAdmin, 'tenants', 'watchStatus', { tenantId: watched.slug })) {
    statuses.push(status);
    if (status.status === 'provisioning') await services.tenantJobs.activate(watched.id);
  }
  const watch = { statuses, expected: [{ id: watched.id, slug: watched.slug, status: 'provisioning', statusReason: null }, { id: watched.id, slug: watched.slug, status: 'active', statusReason: null }] };

  const watchErrors = {
    unauthenticated: await outcome(() => first(port.subscription({ identity: null }, 'tenants', 'watchStatus', { tenantId: watched.slug }))),
    forbidden: await outcome(() => first(port.subscription(globexAdmin, 'tenants', 'watchStatus', { tenantId: watched.slug }))),
    invalid: await outcome(() => first(port.subscription(acmeAdmin, 'tenants', 'watchStatus', { tenantId: '' }))),
  };

  const broken = await provisioningChild();
  let listeningBeforeBreak: string[] = [];
  for await (const status of port.subscription(acmeAdmin, 'tenants', 'watchStatus', { tenantId: broken.id })) {
    listeningBeforeBreak = await listener();
    if (status.status === 'provisioning') break;
  }
  const afterBreak = await released();

  const aborted = await provisioningChild();
  const controller = new AbortController();
  const iterator = port.subscription(acmeAdmin, 'tenants', 'watchStatus', { tenantId: aborted.slug }, { signal: controller.signal })[Symbol.asyncIterator]();
  const firstValue = await iterator.next();
  const pending = iterator.next();
  const listeningBeforeAbort = await listener();
  controller.abort();
  const afterAbortNext = await pending;
  const afterAbort = await released();
  const abort = { firstStatus: (firstValue.value as { status?: string } | undefined)?.status, listeningBeforeBreak, afterBreak, listeningBeforeAbort, afterAbortNext, afterAbort };

  // Uploads: streamed in, measured and hashed; refused over the limit, leaving nothing behind.
  const meta = { filename: 'quarterly report.pdf', contentType: 'application/pdf' };
  const uploadDir = join(fixture.blobs.info().location, 'tenants', acmeId, 'uploads');
  const filesIn = async () => (await readdir(uploadDir).catch(() => [] as string[])).sort();

  const webChunks = chunksOf(3 * 1024 * 1024 + 17);
  const web = await port.upload(acmeAdmin, 'uploads', 'put', { stream: byteSource(webChunks).stream, meta });
  const webStored = await fixture.blobs.get(web.key);
  const nodeChunks = chunksOf(1024 * 1024 + 5, 16 * 1024);
  const node = await port.upload(acmeAdmin, 'uploads', 'put', { stream: Readable.from(nodeChunks), meta: { filename: 'notes.txt', contentType: 'text/plain; charset=utf-8' } });
  const upload = {
    web: { ...web, key: web.key.startsWith(`tenants/${acmeId}/uploads/`), expectedSize: 3 * 1024 * 1024 + 17, expectedSha256: sha256(webChunks), storedSha256: webStored && sha256([webStored]) },
    node: { size: node.size, sha256: node.sha256, expectedSha256: sha256(nodeChunks), contentType: node.contentType },
  };

  const before = await filesIn();
  const over = byteSource(chunksOf(fixture.uploadLimitBytes + 2 * 1024 * 1024));
  const overLimit = {
    outcome: await outcome(() => port.upload(acmeAdmin, 'uploads', 'put', { stream: over.stream, meta })),
    sourceCancelled: over.state.cancelled,
    leftBehind: (await filesIn()).filter((name) => !before.includes(name)),
  };
  const uploadErrors = {
    unauthenticated: await outcome(() => port.upload({ identity: null }, 'uploads', 'put', { stream: byteSource(chunksOf(10)).stream, meta })),
    forbidden: await outcome(() => port.upload({ ...globexAdmin, tenantHint: 'acme' }, 'uploads', 'put', { stream: byteSource(chunksOf(10)).stream, meta })),
    emptyFilename: await outcome(() => port.upload(acmeAdmin, 'uploads', 'put', { stream: byteSource(chunksOf(10)).stream, meta: { ...meta, filename: ' ' } })),
    badMeta: await outcome(() => port.upload(acmeAdmin, 'uploads', 'put', { stream: byteSource(chunksOf(10)).stream, meta: { filename: 'x' } as never })),
    leftBehind: (await filesIn()).filter((name) => !before.includes(name)),
  };

  return { watch, watchErrors, abort, upload, overLimit, uploadErrors };
}
