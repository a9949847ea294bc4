import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { loginWithPkce } from '../../api-edge/identity/login-flow.ts';
import { startPlatform, type PlatformOptions, type RunningPlatform } from '../../control-plane/app/platform.ts';
import { bunExecutable } from '../../scripts/stack/bun.ts';
import { freePort } from '../../scripts/stack/process.ts';
import { assertConforms } from './conformance.ts';

/** In this process; over tRPC's HTTP link to a control-plane process; or edge and control plane in a Bun process, as `npm start` runs them. */
export type ControlPlaneMode = 'in-process' | 'http' | 'bun';

/** Starts the edge and its in-process control plane on Bun (test/harness/bun-edge.ts) and resolves once it listens. */
async function startBunEdge(options: Omit<PlatformOptions, 'role'>): Promise<RunningPlatform> {
  const script = fileURLToPath(new URL('./bun-edge.ts', import.meta.url));
  const child = spawn(bunExecutable(), [script], { env: { ...process.env, SVC_TEST_PLATFORM: JSON.stringify(options) }, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const firstLine = once(createInterface({ input: child.stdout }), 'line');
  const started = await Promise.race([firstLine.then(([line]) => JSON.parse(line as string) as { url: string }), exited.then(([code]) => Promise.reject(new Error(`the Bun edge exited with code ${code} before listening`)))]);
  return {
    url: started.url,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `url` with its host and port replaced by `listen` (`host:port`). */
function through(url: string, listen: string): string {
  const proxied = new URL(url);
  proxied.host = listen;
  return proxied.toString().replace(/\/$/, '');
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface TestStack {
  url: string;
  /** The directory of this stack's blob store, removed on close. */
  blobRoot: string;
  /** The Temporal server, namespace and this stack's own task queue. */
  temporal: { address: string; namespace: string; taskQueue: string };
  /** In the `http` mode: the control plane's tRPC URL, and the credential the edge calls it with. */
  controlPlane?: { url: string; token?: string };
  /** A real access token from the running identity provider (PKCE login), cached per email. */
  token(email: string): Promise<string>;
  /**
   * Calls the edge. Every v3 and v4 answer is checked against the OpenAPI documents
   * (test/harness/conformance.ts) unless `conformance` is false.
   */
  request<T = any>(
    method: string,
    path: string,
    options?: { token?: string; as?: string; body?: unknown; rawBody?: string; headers?: Record<string, string>; conformance?: boolean },
  ): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

/**
 * Starts the platform against the run's test database: the edge with the built-in identity
 * provider, and the control plane in-process or as its own tRPC server over HTTP. Each stack gets
 * its own rate-limit key prefix so that test files do not spend each other's budgets.
 */
export async function startTestStack(
  options: {
    controlPlane?: ControlPlaneMode;
    rateLimits?: PlatformOptions['rateLimits'];
    devUsers?: PlatformOptions['devUsers'];
    trustedProxies?: PlatformOptions['trustedProxies'];
    /** Receive the edge's access log and the worker's activity log (in this process: not with the Bun edge). */
    accessLog?: PlatformOptions['accessLog'];
    activityLog?: PlatformOptions['activityLog'];
    /** The built-in identity provider's private signing keys (default: fresh ones), for tests that sign tokens themselves. */
    devSigningKeys?: PlatformOptions['devSigningKeys'];
    /** Another Temporal server than the run's (address and namespace). */
    temporal?: { address: string; namespace: string };
    /** The task queue of its workflows (default: one of its own); a later stack on the same queue takes over the earlier one's work. */
    taskQueue?: string;
    /** False: no worker runs in the test process; start `worker` processes yourself. */
    worker?: boolean;
    /** An external OIDC provider instead of the built-in one (the test then mints its own tokens: pass `token`). */
    identity?: PlatformOptions['identity'];
    /** An OpenAI-compatible endpoint for AI answers (in every process of the stack). */
    ai?: PlatformOptions['ai'];
    chatStreams?: PlatformOptions['chatStreams'];
    sseHeartbeatMs?: number;
    /** Limits of reading one document, in every process that reads them (a short time limit for bomb tests). */
    extractionLimits?: PlatformOptions['extractionLimits'];
    /** Another database than the run's, migrated (its owner's URL and the tenant connections' login). */
    database?: { url: string; tenantUrl: string };
    /** In the `http` mode: where the edge reaches the control plane instead (`host:port`, a proxy of `upstream`). */
    controlPlaneVia?: (upstream: string) => Promise<string>;
    /** In the `http` mode: the edge's bound on each control-plane call. */
    controlPlaneTimeoutMs?: number;
  } = {},
): Promise<TestStack> {
  const databaseUrl = options.database?.url ?? inject('databaseUrl');
  const tenantDatabaseUrl = options.database?.tenantUrl ?? inject('tenantDatabaseUrl');
  const rateLimits = { keyPrefix: `test-${randomUUID()}`, ...options.rateLimits };
  // Its own task queue: this stack's worker never picks up another test file's workflows.
  const temporal = {
    address: options.temporal?.address ?? inject('temporalAddress'),
    namespace: options.temporal?.namespace ?? inject('temporalNamespace'),
    taskQueue: options.taskQueue ?? `test-${randomUUID()}`,
  };
  const started: RunningPlatform[] = [];
  const blobRoot = await mkdtemp(join(tmpdir(), 'svc-blobs-'));
  const everyProcess = { ai: options.ai, chatStreams: options.chatStreams, extractionLimits: options.extractionLimits };
  let edge: RunningPlatform;
  let controlPlaneOfStack: TestStack['controlPlane'];
  if ((options.controlPlane ?? inject('controlPlaneMode')) === 'http') {
    // The control plane must know the edge's origin (the token issuer) before the edge listens, so
    // the edge's port is picked first; another socket may take it meanwhile, so then start again.
    for (let attempt = 1; ; attempt++) {
      const edgePort = await freePort();
      const publicUrl = `http://127.0.0.1:${edgePort}`;
      const controlPlane = await startPlatform({ role: 'control-plane', databaseUrl, tenantDatabaseUrl, blobRoot, port: 0, publicUrl, seedDevelopmentData: true, temporal, identity: options.identity, ...everyProcess });
      started.push(controlPlane);
      if (options.worker !== false) started.push(await startPlatform({ role: 'worker', databaseUrl, tenantDatabaseUrl, blobRoot, port: 0, temporal, activityLog: options.activityLog, ...everyProcess }));
      try {
        edge = await startPlatform({
          role: 'edge',
          databaseUrl,
          tenantDatabaseUrl,
          port: edgePort,
          publicUrl,
          controlPlaneUrl: options.controlPlaneVia ? through(controlPlane.url, await options.controlPlaneVia(new URL(controlPlane.url).host)) : controlPlane.url,
          controlPlaneToken: controlPlane.controlPlaneToken,
          controlPlaneTimeoutMs: options.controlPlaneTimeoutMs,
          accessLog: options.accessLog,
          rateLimits,
          devUsers: options.devUsers,
          devSigningKeys: options.devSigningKeys,
          trustedProxies: options.trustedProxies,
          identity: options.identity,
          sseHeartbeatMs: options.sseHeartbeatMs,
        });
        controlPlaneOfStack = { url: controlPlane.url, token: controlPlane.controlPlaneToken };
        break;
      } catch (error) {
        for (const platform of started.splice(0).reverse()) await platform.close();
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 3) throw error;
      }
    }
  } else if ((options.controlPlane ?? inject('controlPlaneMode')) === 'bun') {
    if (options.worker !== false) started.push(await startPlatform({ role: 'worker', databaseUrl, tenantDatabaseUrl, blobRoot, port: 0, temporal, activityLog: options.activityLog, ...everyProcess }));
    try {
      edge = await startBunEdge({
        databaseUrl,
        tenantDatabaseUrl,
        blobRoot,
        port: 0,
        seedDevelopmentData: true,
        rateLimits,
        devUsers: options.devUsers,
        devSigningKeys: options.devSigningKeys,
        trustedProxies: options.trustedProxies,
        temporal,
        identity: options.identity,
        sseHeartbeatMs: options.sseHeartbeatMs,
        ...everyProcess,
      });
    } catch (error) {
      for (const platform of started.splice(0).reverse()) await platform.close();
      throw error;
    }
  } else {
    edge = await startPlatform({
      role: 'all',
      databaseUrl,
      tenantDatabaseUrl,
      blobRoot,
      port: 0,
      seedDevelopmentData: true,
      accessLog: options.accessLog,
      activityLog: options.activityLog,
      rateLimits,
      devUsers: options.devUsers,
      devSigningKeys: options.devSigningKeys,
      trustedProxies: options.trustedProxies,
      temporal,
      runWorker: options.worker,
      identity: options.identity,
      sseHeartbeatMs: options.sseHeartbeatMs,
      ...everyProcess,
    });
  }
  started.push(edge);

  const tokens = new Map<string, Promise<string>>();
  const token = (email: string) => {
    if (!tokens.has(email)) tokens.set(email, loginWithPkce({ issuer: edge.url, email }).then((t) => t.accessToken));
    return tokens.get(email)!;
  };

  return {
    url: edge.url,
    blobRoot,
    temporal,
    controlPlane: controlPlaneOfStack,
    token,
    async request(method, path, { token: bearer, as, body, rawBody, headers = {}, conformance = true } = {}) {
      const auth = bearer ?? (as ? await token(as) : undefined);
      const response = await fetch(edge.url + path, {
        method,
        headers: {
          ...(auth ? { authorization: `Bearer ${auth}` } : {}),
          ...(body !== undefined || rawBody !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        body: rawBody ?? (body !== undefined ? JSON.stringify(body) : undefined),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: keep the text
      }
      if (conformance) assertConforms({ method, path, status: response.status, headers: response.headers, body: parsed });
      return { status: response.status, headers: response.headers, body: parsed as never };
    },
    async close() {
      for (const platform of started.reverse()) await platform.close();
      await rm(blobRoot, { recursive: true, force: true });
    },
  };
}

export const ADMIN = 'admin@acme.test';
export const MEMBER = 'member@acme.test';
export const GLOBEX_ADMIN = 'admin@globex.test';
export const V3 = '/api/svc/v3';
