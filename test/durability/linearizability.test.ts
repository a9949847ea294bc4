import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loginWithPkce } from '../../api-edge/identity/login-flow.ts';
import { freePort } from '../../scripts/stack/process.ts';
import { killProcessGroup } from '../harness/process-group.ts';
import { until } from '../harness/until.ts';
import { checkHistory, writeHistory, type HistoryInput, type HistoryItem, type HistoryOperation, type HistoryOutput } from '../linearizability/checker.ts';
import { devSecretsKey } from '../../control-plane/app/dev-secrets-key.ts';

/**
 * Lost updates under faults, checked by a model checker. Six clients read, replace at a version
 * (`If-Match` or the body's `version`), replace at any version (`If-Match: *`) and batch-update
 * three resources through two real platform processes (`node --import tsx main.ts`) on one
 * database, while every second PostgreSQL holds the rows locked and cancels the statements waiting
 * on them, and a process is killed with SIGKILL. The recorded history must be linearizable
 * (test/linearizability/checker, porcupine), and the resources' own version history must show one
 * applied write per version, each acknowledged write once, no refused one, and ambiguous ones at
 * most once.
 *
 * `LINEARIZABILITY_SECONDS` lengthens the load, killing and restarting each process in turn
 * (`npm run check:linearizability` runs two minutes).
 */

/** The short version (`npm test`) kills one process; a longer one kills and restarts each in turn. */
const SHORT_SECONDS = 8;
const SECONDS = Number(process.env.LINEARIZABILITY_SECONDS ?? SHORT_SECONDS);
const CLIENTS = 6;
const RESOURCES = 3;
/**
 * The clients move on to three fresh resources every this many seconds: the checker takes each
 * three (and their operations) on its own, so its work grows with the run, not exponentially. An
 * ambiguous write at any version is what costs most: it may take effect anywhere up to the end.
 */
const GROUP_SECONDS = 2;
const DATA = '/v4/data/resources';
/** A request unanswered this long counts as ambiguous: it may still take effect. */
const REQUEST_TIMEOUT_MS = 5_000;
const DATABASE_FAULT_EVERY_MS = 1_000;
const ROWS_LOCKED_MS = 300;
/**
 * Dropping connections instead of cancelling statements: off by default, on with
 * `LINEARIZABILITY_DROP_CONNECTIONS=1 npm run check:linearizability`. A dropped connection
 * neither crashes a platform process nor stays lost to its pool (decision 0179: 1,251 drops in
 * 123 s, no process crashed, the history linearizable); while the drops go on, many requests go
 * unanswered within the client's timeout, which the checker counts as ambiguous.
 */
const DROP_CONNECTIONS = process.env.LINEARIZABILITY_DROP_CONNECTIONS === '1';

interface Platform {
  name: string;
  port: number;
  url: string;
  child?: ChildProcess;
  /** Set while the process serves; cleared just before it is killed. */
  token?: string;
}

/** How one request ended: answered (status and body), refused before it reached the platform, or unknown. */
type Answer = { kind: 'answered'; status: number; body: any } | { kind: 'refused'; reason: string } | { kind: 'unknown'; reason: string };

interface Written {
  tag: string;
  id: string;
  /** The version the write replaced at; undefined for a write at any version. */
  expected?: number;
  /** ok: the version its answer named. */
  outcome: 'ok' | 'conflict' | 'refused' | 'unknown';
  version?: number;
}

describe('versioned writes and batches under faults', () => {
  let stateDir: string;
  let admin: postgres.Sql;
  const application = `linearizability-${randomBytes(4).toString('hex')}`;
  const platforms: Platform[] = [];
  /** Processes that ended other than by the test's SIGKILL. */
  const crashes: string[] = [];

  /** Each process's connections carry a name of their own, so that PostgreSQL can drop exactly those. */
  const applicationOf = (platform: Platform) => `${application}-${platform.name}`;
  const databaseUrl = (url: string, platform: Platform) => {
    const withName = new URL(url);
    withName.searchParams.set('application_name', applicationOf(platform));
    return withName.toString();
  };

  /** Starts `platform`'s process on its port and signs in to it (each process's identity provider has keys of its own). */
  const start = async (platform: Platform) => {
    const child = spawn('node', ['--import', 'tsx', 'main.ts'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        SVC_STATE_DIR: join(stateDir, platform.name),
        // The run's operator key, so that what other processes sealed (realtime signing keys) stays readable to all.
        SECRETS_KEY: devSecretsKey().toString('base64'),
        SVC_CACHE_DIR: join(stateDir, 'cache'),
        SVC_BLOB_DIR: join(stateDir, 'blobs'),
        KUBECONFIG: join(stateDir, 'no-kubeconfig'),
        DATABASE_URL: databaseUrl(inject('databaseUrl'), platform),
        TENANT_DATABASE_URL: databaseUrl(inject('tenantDatabaseUrl'), platform),
        HOST: '127.0.0.1',
        PORT: String(platform.port),
        PUBLIC_URL: platform.url,
        RATE_LIMIT_RESOURCES_PER_MINUTE: '1000000',
        RATE_LIMIT_API_PER_MINUTE: '1000000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    await until(async () => output.includes('platform ready on') || child.exitCode !== null, (ready) => ready, 90_000);
    if (child.exitCode !== null) throw new Error(`platform ${platform.name} exited before it was ready: ${output}`);
    child.once('exit', (code, signal) => {
      platform.token = undefined;
      if (signal !== 'SIGKILL') crashes.push(`platform ${platform.name} exited by itself (${code ?? signal}): ${output.slice(-2000)}`);
    });
    platform.child = child;
    platform.token = (await loginWithPkce({ issuer: platform.url, email: 'admin@acme.test' })).accessToken;
  };

  const kill = async (platform: Platform) => {
    platform.token = undefined;
    const child = platform.child!;
    killProcessGroup(child);
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  };

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'svc-linearizability-'));
    admin = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
    for (const name of ['a', 'b']) {
      const port = await freePort();
      platforms.push({ name, port, url: `http://127.0.0.1:${port}` });
    }
    await Promise.all(platforms.map(start));
  }, 180_000);

  afterAll(async () => {
    for (const platform of platforms) if (platform.child) killProcessGroup(platform.child);
    await admin?.end({ timeout: 5 });
    await rm(stateDir, { recursive: true, force: true });
  });

  it('keeps every acknowledged write, applies each version once and stays linearizable', async () => {
    const request = async (platform: Platform, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
      if (!platform.token) return { kind: 'refused', reason: `${platform.name} is down` };
      try {
        const response = await fetch(platform.url + path, {
          method,
          headers: { authorization: `Bearer ${platform.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        return { kind: 'answered', status: response.status, body: await response.json().catch(() => undefined) };
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause;
        // Nothing was sent on a refused connection; anything else may have reached the platform.
        if (cause?.code === 'ECONNREFUSED') return { kind: 'refused', reason: 'connection refused' };
        return { kind: 'unknown', reason: `${(error as Error).name}: ${cause?.code ?? (error as Error).message}` };
      }
    };
    const setup = async (path: string, body: unknown) => {
      const answer = await request(platforms[0]!, 'POST', path, body);
      expect(answer.kind === 'answered' && answer.status < 300, JSON.stringify(answer)).toBe(true);
      return (answer as { body: any }).body;
    };

    const tenants = (await (await fetch(`${platforms[0]!.url}/v4/identity/tenants`, { headers: { authorization: `Bearer ${platforms[0]!.token}` } })).json()) as { data: Array<{ id: string; slug: string }> };
    const acme = tenants.data.find((t) => t.slug === 'acme')!.id;
    const type = (await setup(`${DATA}/object-types?tenant_id=${acme}`, { name: `Linearizable${randomBytes(3).toString('hex')}`, schema: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'], additionalProperties: false } })).key as string;
    const initial: Record<string, { version: number; data: string }> = {};
    const groups = Math.max(1, Math.ceil(SECONDS / GROUP_SECONDS));
    for (let i = 0; i < RESOURCES * groups; i++) {
      const created = await setup(`${DATA}/${acme}/${type}`, { data: { tag: `initial-${i}` } });
      initial[created.id] = { version: created.version, data: created.data.tag };
    }
    const ids = Object.keys(initial);

    const t0 = performance.now();
    const now = () => Math.round((performance.now() - t0) * 1000);
    const operations: HistoryOperation[] = [];
    const written: Written[] = [];
    const unexpected: string[] = [];
    const record = (client: number, call: number, input: HistoryInput, output: HistoryOutput) => operations.push({ client, call, return: now(), input, output });

    /** An answer the model cannot take (a 400, a 404…) is the test's failure, not an ambiguous outcome. */
    const outcomeOf = (answer: Answer, what: string): 'ok' | 'conflict' | 'refused' | 'unknown' => {
      if (answer.kind !== 'answered') return answer.kind;
      if (answer.status === 200) return 'ok';
      if (answer.status === 409 && answer.body?.error?.code === 'VERSION_CONFLICT') return 'conflict';
      // Refused before any data was touched: a stale sign-in, a rate limit.
      if (answer.status === 401 || answer.status === 429) return 'refused';
      if (answer.status >= 500) return 'unknown';
      unexpected.push(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
      return 'refused';
    };

    let running = true;
    const client = async (c: number) => {
      // The versions this client last saw; unknown after a conflict or an ambiguous answer, so it reads first.
      const known = new Map<string, number>(ids.map((id) => [id, initial[id]!.version]));
      for (let n = 0; running; n++) {
        const live = platforms.filter((p) => p.token);
        if (live.length === 0) {
          await sleep(50);
          continue;
        }
        const platform = live[(c + n) % live.length]!;
        const groupIndex = Math.min(groups - 1, Math.floor((performance.now() - t0) / (GROUP_SECONDS * 1000)));
        const group = ids.slice(groupIndex * RESOURCES, (groupIndex + 1) * RESOURCES);
        const id = group[Math.floor(Math.random() * group.length)]!;
        const roll = Math.random();
        const version = known.get(id);
        const tag = `c${c}-${n}`;
        const call = now();
        if (version === undefined || roll < 0.35) {
          const answer = await request(platform, 'GET', `${DATA}/${acme}/${type}/${id}`);
          if (answer.kind === 'answered' && answer.status === 200) {
            known.set(id, answer.body.version);
            record(c, call, { op: 'read', id }, { status: 'ok', version: answer.body.version, data: answer.body.data.tag });
          } else outcomeOf(answer, `read ${id}`); // an unanswered read tells nothing
          continue;
        }
        const other = group.find((o) => o !== id && known.get(o) !== undefined);
        let items: HistoryItem[];
        let answer: Answer;
        if (roll < 0.8 || !other) {
          // A write at the version last seen (named by If-Match or by the body's version, in turn), or (one in nine) at any version.
          const atAny = roll >= 0.75;
          items = [{ id, ...(atAny ? {} : { version }), data: tag }];
          if (atAny) answer = await request(platform, 'PUT', `${DATA}/${acme}/${type}/${id}`, { data: { tag } }, { 'if-match': '*' });
          else if (n % 2) answer = await request(platform, 'PUT', `${DATA}/${acme}/${type}/${id}`, { data: { tag }, version });
          else answer = await request(platform, 'PUT', `${DATA}/${acme}/${type}/${id}`, { data: { tag } }, { 'if-match': `"${version}"` });
        } else {
          items = [id, other].map((itemId, i) => ({ id: itemId, version: known.get(itemId)!, data: `${tag}-${i}` }));
          answer = await request(platform, 'POST', `${DATA}/${acme}/${type}/batch/update`, { items: items.map((item) => ({ id: item.id, data: { tag: item.data }, version: item.version })) });
        }
        const outcome = outcomeOf(answer, `${items.length > 1 ? 'batch' : 'write'} ${JSON.stringify(items)}`);
        const versions: number[] = outcome === 'ok' ? (items.length > 1 ? (answer as { body: any }).body.data.map((r: { version: number }) => r.version) : [(answer as { body: any }).body.version]) : [];
        const input: HistoryInput = items.length > 1 ? { op: 'batch', items } : { op: 'write', ...items[0]! };
        if (outcome === 'ok') record(c, call, input, { status: 'ok', versions });
        else if (outcome === 'conflict' || outcome === 'unknown') record(c, call, input, { status: outcome });
        items.forEach((item, i) => {
          written.push({ tag: item.data, id: item.id, expected: item.version, outcome, version: versions[i] });
          if (outcome === 'ok') known.set(item.id, versions[i]!);
          else if (outcome !== 'refused') known.delete(item.id);
        });
      }
    };

    // Faults: every second PostgreSQL holds the three rows locked for a while, then cancels the
    // serving processes' statements waiting on them (or, with LINEARIZABILITY_DROP_CONNECTIONS=1,
    // drops those processes' connections); a process starting up is spared. Processes are killed
    // with SIGKILL mid-load.
    let faulting = true;
    let hit = 0;
    const databaseFaults = (async () => {
      while (faulting) {
        await sleep(DATABASE_FAULT_EVERY_MS);
        // A batch locking the rows in another order may deadlock with this; PostgreSQL then ends one of the two.
        await admin.begin(async (tx) => {
          await tx`select 1 from resources where id = any(${ids}::uuid[]) order by id for update`;
          await sleep(ROWS_LOCKED_MS);
          const serving = platforms.filter((p) => p.token).map(applicationOf);
          const affected = DROP_CONNECTIONS
            ? await tx`select pg_terminate_backend(pid) from pg_stat_activity where application_name = any(${serving})`
            : await tx`select pg_cancel_backend(pid) from pg_stat_activity where application_name = any(${serving}) and wait_event_type = 'Lock'`;
          hit += affected.length;
        }).catch((error: { code?: string }) => {
          if (error.code !== '40P01') throw error;
        });
      }
    })();
    const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
    const kills: string[] = [];
    const killAt = async (platform: Platform) => {
      await kill(platform);
      kills.push(`${platform.name}@${Math.round(performance.now() - t0)} ms`);
    };
    const loadEnds = sleep(SECONDS * 1000).then(() => (running = false));
    if (SECONDS <= SHORT_SECONDS) {
      // One process killed a third of the way in; the other serves on alone.
      await sleep((SECONDS * 1000) / 3);
      await killAt(platforms[0]!);
    } else {
      // Each process in turn killed and started again, the other serving meanwhile.
      for (let round = 0; running; round++) {
        await sleep(2_000);
        if (!running) break;
        const platform = platforms[round % platforms.length]!;
        await killAt(platform);
        await start(platform);
      }
    }
    await loadEnds;
    await Promise.all(clients);
    faulting = false;
    await databaseFaults;
    const loadMs = Math.round(performance.now() - t0);

    // Each resource's final state, read once nothing is in flight, and its whole version history.
    const finals = new Map<string, { version: number; tag: string }>();
    const applied = new Map<string, Array<{ version: number; tag: string }>>();
    const reader = platforms.find((p) => p.token);
    expect(reader, 'no platform process is left serving').toBeDefined();
    // A read answered 503 (a pooled connection the last fault dropped) is retried after its Retry-After, as the contract says.
    const read = async (path: string): Promise<{ call: number; answer: Answer }> => {
      for (let attempt = 1; ; attempt++) {
        const call = now();
        const answer = await request(reader!, 'GET', path);
        if (attempt === 5 || answer.kind !== 'answered' || answer.status !== 503) return { call, answer };
        await sleep(1_000);
      }
    };
    for (const id of ids) {
      const { call, answer } = await read(`${DATA}/${acme}/${type}/${id}`);
      expect(answer.kind === 'answered' && answer.status, JSON.stringify(answer)).toBe(200);
      const resource = (answer as { body: any }).body;
      finals.set(id, { version: resource.version, tag: resource.data.tag });
      record(CLIENTS, call, { op: 'read', id }, { status: 'ok', version: resource.version, data: resource.data.tag });
      const entries: Array<{ version: number; operation: string; data: { tag: string } }> = [];
      for (let page = 1; ; page++) {
        const { answer: history } = await read(`${DATA}/${acme}/${type}/${id}/history?limit=100&page=${page}`);
        expect(history.kind === 'answered' && history.status, JSON.stringify(history)).toBe(200);
        entries.push(...(history as { body: any }).body.data);
        if (!(history as { body: any }).body.hasMore) break;
      }
      applied.set(
        id,
        entries
          .filter((e) => e.version > initial[id]!.version)
          .map((e) => ({ version: e.version, tag: e.data.tag }))
          .sort((x, y) => x.version - y.version),
      );
    }

    const count = (outcome: Written['outcome']) => written.filter((w) => w.outcome === outcome).length;
    const summary = `${operations.length} operations in ${loadMs} ms: ${count('ok')} writes acknowledged, ${count('conflict')} conflicts, ${count('unknown')} ambiguous, ${count('refused')} refused; ${hit} ${DROP_CONNECTIONS ? 'connections dropped' : 'statements cancelled'}; killed ${kills.join(', ')}`;
    process.stderr.write(`[linearizability] ${summary}\n`);
    expect(crashes).toEqual([]);
    expect(unexpected, summary).toEqual([]);
    expect(kills.length).toBeGreaterThanOrEqual(1);
    expect(count('ok'), summary).toBeGreaterThan(20);

    // The cheap invariants, from the resources' own history.
    const byTag = new Map(written.map((w) => [w.tag, w]));
    for (const id of ids) {
      const versions = applied.get(id)!;
      const final = finals.get(id)!;
      // One applied write per version, with no gap, up to the final version.
      expect(versions.map((v) => v.version), id).toEqual(Array.from({ length: final.version - initial[id]!.version }, (_, i) => initial[id]!.version + 1 + i));
      expect(versions.at(-1)?.tag ?? initial[id]!.data).toBe(final.tag);
      for (const { version, tag } of versions) {
        const write = byTag.get(tag);
        expect(write?.id, `version ${version} of ${id} holds ${tag}, which no client wrote to it`).toBe(id);
        // Only an acknowledged or an ambiguous write may have been applied, and an acknowledged one at the version it was told.
        expect(['ok', 'unknown'], `${tag} (${write!.outcome}) was applied as version ${version}`).toContain(write!.outcome);
        if (write!.outcome === 'ok') expect(write!.version).toBe(version);
        if (write!.expected !== undefined) expect(write!.expected, `${tag} replaced version ${write!.expected} but became version ${version}`).toBe(version - 1);
      }
      const appliedTags = new Set(versions.map((v) => v.tag));
      expect(appliedTags.size, `a write applied twice to ${id}`).toBe(versions.length);
      const mine = written.filter((w) => w.id === id);
      // Every acknowledged write is there; final version = initial + acknowledged + ambiguous ones applied.
      expect(mine.filter((w) => w.outcome === 'ok' && !appliedTags.has(w.tag)).map((w) => w.tag), `acknowledged writes lost on ${id}`).toEqual([]);
      const ambiguousApplied = mine.filter((w) => w.outcome === 'unknown' && appliedTags.has(w.tag)).length;
      expect(final.version).toBe(initial[id]!.version + mine.filter((w) => w.outcome === 'ok').length + ambiguousApplied);
      // At most one 2xx per expected version.
      const acknowledgedAt = mine.filter((w) => w.outcome === 'ok' && w.expected !== undefined).map((w) => w.expected);
      expect(new Set(acknowledgedAt).size, `two writes to ${id} acknowledged at one version`).toBe(acknowledgedAt.length);
    }

    // The model checker, on the history as the clients saw it.
    const file = join(tmpdir(), `linearizability-${application}.jsonl`);
    const visualization = file.replace(/\.jsonl$/, '.html');
    writeHistory(file, { initial, operations });
    const result = await checkHistory(file, { visualize: visualization, timeoutSeconds: Math.max(60, SECONDS * 2) });
    process.stderr.write(`[linearizability] ${result.message}\n`);
    expect(result.verdict, `${result.message}\nhistory: ${file}`).toBe('linearizable');

    // The check is not vacuous on this history: one refused write, told instead that it succeeded
    // (a lost update), makes it fail. Chosen where an earlier answer already showed a later version.
    const versionSeen = (op: HistoryOperation, id: string) => {
      if (op.output.status !== 'ok') return 0;
      if ('version' in op.output) return op.input.op === 'read' && op.input.id === id ? op.output.version : 0;
      const items = op.input.op === 'batch' ? op.input.items : op.input.op === 'write' ? [op.input] : [];
      return op.output.versions[items.findIndex((item) => item.id === id)] ?? 0;
    };
    // Only that write's group of resources is checked, the one with the fewest ambiguous answers:
    // proving a violation searches every order, and each ambiguous write multiplies them.
    const groupOf = (op: HistoryOperation) => Math.floor(ids.indexOf(op.input.op === 'batch' ? op.input.items[0]!.id : op.input.id) / RESOURCES);
    const ambiguousIn = (group: number) => operations.filter((op) => groupOf(op) === group && op.output.status === 'unknown').length;
    const candidates = operations.filter(
      (op) => op.input.op === 'write' && op.input.version !== undefined && op.output.status === 'conflict' && operations.some((seen) => seen.return < op.call && versionSeen(seen, (op.input as HistoryItem).id) > (op.input as HistoryItem).version!),
    );
    expect(candidates.length).toBeGreaterThan(0);
    const stale = candidates.reduce((best, op) => (ambiguousIn(groupOf(op)) < ambiguousIn(groupOf(best)) ? op : best));
    const lost = operations
      .filter((op) => groupOf(op) === groupOf(stale))
      .map((op) => (op === stale ? { ...op, output: { status: 'ok' as const, versions: [(op.input as HistoryItem).version! + 1] } } : op));
    writeHistory(file, { initial, operations: lost });
    const refused = await checkHistory(file, { timeoutSeconds: Math.max(60, SECONDS * 2) });
    expect(refused.verdict, refused.message).toBe('violation');
    expect(refused.message).toMatch(/^not linearizable: /);
    await rm(file, { force: true });
  }, 120_000 + SECONDS * 3_000);
});
