import { randomBytes } from 'node:crypto';
import type { AnyElysia } from 'elysia';
import type { JSONWebKeySet } from 'jose';
import { createEdgeApp } from '../../api-edge/app.ts';
import { createHttpControlPlane } from '../../api-edge/control-plane-http.ts';
import { BFF_CLIENT_ID, createDevIdentityProvider, type DevIdentityProvider, type RegisteredClients } from '../../api-edge/identity/dev-provider.ts';
import type { DevUser } from '../../api-edge/identity/dev-users.ts';
import { bffRoutes } from '../../api-edge/routes/auth.ts';
import { trustedProxies } from '../../api-edge/plugins/client-address.ts';
import { createTokenVerifier, withVerificationCache } from '../../api-edge/identity/token-verifier.ts';
import { createRateLimits, DEFAULT_POLICIES, type RateLimitGroup, type RateLimitPolicy } from '../../api-edge/plugins/rate-limit.ts';
import { postgresLimiters } from '../../api-edge/plugins/rate-limit-postgres.ts';
import type { AccessLog } from '../../api-edge/observability.ts';
import { asEdgeServer, createEdgeServer } from '../../api-edge/server.ts';
import { createLocalDirectoryBlobStore } from '../blobs/local-directory.ts';
import { createDb, createPool, type Db } from '../db/client.ts';
import type { DbTimeouts } from '../db/faults.ts';
import { seedDevelopmentData } from '../identity/dev-seed.ts';
import { developmentTenants } from '../tenants/tenant-ports.ts';
import { createInProcessControlPlane } from './in-process.ts';
import { createControlPlaneServer } from './server.ts';
import { generateControlPlaneToken } from './control-plane-token.ts';
import { apiServicesOf, createServices, operatorServicesOf, workerServicesOf, type AiDeps, type Services } from './services.ts';
import type { ControlPlane } from './control-plane.ts';
import type { IdentityProviderSettings } from '../idp-apps/idp-apps.service.ts';
import type { Plan } from '../capabilities/capabilities.schema.ts';
import { createTemporalWorkflows, type TemporalSettings } from '../temporal/temporal-workflows.ts';
import type { WorkflowsPort } from '../temporal/workflows.port.ts';
import { startWorker, type RunningWorker } from '../../workers/worker.ts';
import type { ActivityLog } from '../../workers/activity-trace.ts';
import { loadKubeConfig } from '../operator/kube.ts';
import { startOperator, type RunningOperator } from '../operator/operator.ts';
import { startHealthServer, type HealthReport } from './health-server.ts';
import { stateDir } from './state-dir.ts';
import { devSecretsKey } from './dev-secrets-key.ts';
import { createSecretBox } from '../secrets/secret-box.ts';
import { sealStoredSecretsOnStart } from './stored-secrets.ts';
import type { ExtractionLimits } from '../extract/extractor.ts';

export type PlatformRole = 'all' | 'edge' | 'control-plane' | 'worker' | 'operator';

export interface PlatformOptions {
  role: PlatformRole;
  databaseUrl?: string;
  /** The login of tenant connections, a member of `svc_app` only (`TENANT_DATABASE_URL`); default `databaseUrl`'s. */
  tenantDatabaseUrl?: string;
  host?: string;
  /** Port of the REST edge (roles all, edge) or of the tRPC server (role control-plane); 0 picks one. */
  port: number;
  /** Origin that clients reach the edge at; it is also the built-in identity provider's issuer. */
  publicUrl?: string;
  /** The control plane's tRPC URL; the edge calls it over HTTP instead of in-process. */
  controlPlaneUrl?: string;
  /**
   * The credential of the control plane's port (`CONTROL_PLANE_TOKEN`): what role `control-plane`
   * requires of every caller (default: one made for this process, see {@link RunningPlatform}), and
   * what an edge with `controlPlaneUrl` sends (required there).
   */
  controlPlaneToken?: string;
  /**
   * An edge with `controlPlaneUrl`: how long a call may wait for the control plane's answer to
   * begin before it is a 503 with `Retry-After` (`CONTROL_PLANE_TIMEOUT_SECONDS`); default
   * DEFAULT_CONTROL_PLANE_TIMEOUT_MS.
   */
  controlPlaneTimeoutMs?: number;
  /** Temporal frontend, namespace and task queue; without it executions and provisioning are unavailable. */
  temporal?: TemporalSettings;
  /** Directory of the local blob store (tenant areas under `tenants/<id>/`); default `<state dir>/blobs`. */
  blobRoot?: string;
  /** Roles `worker` and `operator`: where `GET /health` (and `GET /metrics`) is served (0 picks a port; omitted: not served). */
  healthPort?: number;
  /**
   * A port of its own for `GET /metrics` (`METRICS_PORT`; 0 picks one): the edge and control plane
   * then no longer serve it on their API port, nor the worker and operator on their health port.
   */
  metricsPort?: number;
  /** The edge's access log: one entry per answered request (production: JSON lines). */
  accessLog?: AccessLog;
  /** The worker's activity log: one entry per activity run, with its trace (production: JSON lines). */
  activityLog?: ActivityLog;
  /** Whether role `all` runs a worker in-process (default true); false leaves the work to `worker` processes. */
  runWorker?: boolean;
  /** Runs the Kubernetes operator (roles `all` and `operator`) with this kubeconfig (in-cluster config when no path). */
  operator?: { kubeconfigPath?: string; namespace?: string; identity?: string; leaseName?: string };
  /**
   * An external OIDC provider; without it the edge serves the built-in development provider.
   * `registrationToken` is the initial access token its dynamic client registration (RFC 7591) asks for, if any.
   */
  identity?: {
    issuer: string;
    audience: string;
    jwksUrl: string;
    tenantClaim?: string;
    registrationToken?: string;
    /** The platform's own clients at the provider (`AUTH_FIRST_PARTY_CLIENTS`): given, a token of any other client no tenant registered is refused (401). */
    firstPartyClients?: readonly string[];
    /** A token naming no client: refused with 401 (the default), or one of the platform's own (`AUTH_TOKENS_WITHOUT_CLIENT`). */
    tokensWithoutClient?: 'refuse' | 'first-party';
  };
  /** Users the built-in provider signs in (default: the seeded development users). */
  devUsers?: readonly DevUser[];
  /** Private signing keys of the built-in provider (kept across restarts by `npm start`). */
  devSigningKeys?: JSONWebKeySet;
  /**
   * The operator key (32 bytes) that seals stored secrets, for the processes that serve the API;
   * default: the development key kept in the state directory (main.ts requires one in production).
   */
  secretsKey?: Uint8Array;
  /** Keys stored secrets may still be sealed under while the operator changes `secretsKey` (`SECRETS_KEY_PREVIOUS`): they open, and are sealed again under `secretsKey` at start. */
  previousSecretsKeys?: readonly Uint8Array[];
  /** Refuse to start when stored secrets are sealed under a key neither `secretsKey` nor a previous one is (production); otherwise that is logged. */
  refuseUnreadableSecrets?: boolean;
  audience?: string;
  seedDevelopmentData?: boolean;
  rateLimits?: { keyPrefix?: string; policies?: Partial<Record<RateLimitGroup, RateLimitPolicy>> };
  /**
   * Backend-for-frontend client at the identity provider, and the key of its sign-in cookie;
   * `secureCookies` (production) makes its cookies Secure `__Host-` cookies on any public URL, not only on https.
   */
  bff?: { clientId?: string; clientSecret?: string; scope?: string; secret?: Uint8Array; secureCookies?: boolean };
  extraPlugins?: AnyElysia[];
  /** Addresses or CIDR ranges of the proxies in front of the edge, whose X-Forwarded-For names the client. */
  trustedProxies?: readonly string[];
  log?: (message: string, detail?: unknown) => void;
  /** An OpenAI-compatible endpoint for AI answers (`AI_BASE_URL`, `AI_API_KEY`, `AI_MODEL`); without it the local model answers. */
  ai?: AiDeps['ai'];
  /** How answer streams are kept (leases, polling); the defaults suit production. */
  chatStreams?: AiDeps['chatStreams'];
  /** The plan of tenants none was set for (`DEFAULT_PLAN`); default the catalog's, which holds everything the API describes. */
  defaultPlan?: Plan;
  /** The edge's SSE heartbeat comment interval in milliseconds (default 15 s). */
  sseHeartbeatMs?: number;
  /** Connect, idle, statement and acquire timeouts of the database pools (`DB_*`); default DEFAULT_DB_TIMEOUTS. */
  dbTimeouts?: DbTimeouts;
  /** How long `close` lets requests in flight finish before it cuts them (`SHUTDOWN_GRACE_SECONDS`); default 0. */
  shutdownGraceMs?: number;
  /** How long an administrator's invitation can be accepted (`INVITATION_TTL_DAYS`); default 7 days. */
  invitationTtlMs?: number;
  /** Limits of reading one document (`EXTRACTION_TIMEOUT_MS`, `EXTRACTION_HEAP_MB`); default DEFAULT_EXTRACTION_LIMITS. */
  extractionLimits?: Partial<ExtractionLimits>;
}

export interface RunningPlatform {
  url: string;
  /** Where `GET /metrics` is served when `metricsPort` was given. */
  metricsUrl?: string;
  /** The built-in identity provider, when this process serves it. */
  identityProvider?: DevIdentityProvider;
  /** Role `control-plane`: the credential its callers must present (the one given, or the one made). */
  controlPlaneToken?: string;
  close(): Promise<void>;
}

export const DEFAULT_AUDIENCE = 'urn:svc:api';

/** Resolves once no chat answer is being produced in this process, or at `deadline` (epoch ms). */
async function answersFinished(services: Services, deadline: number): Promise<void> {
  while (services.chat.producing() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** The clients apps registered (v4 provisioning/idp-apps), which the built-in provider asks the control plane for. */
function registeredClientsOf(controlPlane: ControlPlane): RegisteredClients {
  return {
    find: async (clientId) => (await controlPlane.query({ identity: null }, 'idpApps', 'providerClient', { clientId })) ?? undefined,
    verifySecret: (clientId, secret) => controlPlane.query({ identity: null }, 'idpApps', 'verifySecret', { clientId, secret }),
  };
}

/** Where the platform's start-up and shutdown report what happened. */
type Log = NonNullable<PlatformOptions['log']>;

/** What a process runs besides its server: the services over the database, the worker, the operator and the metrics port. */
interface Background {
  db?: Db;
  services?: Services;
  workflows?: WorkflowsPort & { close(): Promise<void> };
  worker?: RunningWorker;
  operator?: RunningOperator;
  metricsServer?: { url: string; close(): Promise<void> };
  /**
   * How long requests in flight, and then chat answers being produced, may take to finish at
   * close: one deadline for the whole drain, so that a stop ends within the grace (and the pod's
   * termination grace, which adds the preStop sleep and 5 s to it) however the wait divides.
   */
  graceMs: number;
}

/**
 * Starts the platform's processes for a role: `all` (edge with an in-process control plane, the
 * local default), `edge` (calls the control plane over HTTP), or `control-plane` (tRPC over HTTP).
 */
export async function startPlatform(options: PlatformOptions): Promise<RunningPlatform> {
  if (options.role !== 'control-plane' && options.controlPlaneUrl && !options.controlPlaneToken) {
    throw new Error('an edge that calls the control plane over HTTP needs its credential (controlPlaneToken)');
  }
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? (() => {});
  // The built-in provider's issuer is the edge's origin, known once it listens when its port is picked then.
  const builtInIssuer = { url: options.publicUrl ?? `http://localhost:${options.port}` };
  const workflows = options.temporal ? createTemporalWorkflows(options.temporal) : undefined;
  const needsDb = options.role !== 'edge' || !options.controlPlaneUrl;
  const { db, services } = needsDb ? await startServices(options, { workflows, builtInIssuer: () => builtInIssuer.url, log }) : {};
  const worker = await startWorkerOf(options, services);
  const operator = startOperatorOf(options, services, log);
  const metricsServer = options.metricsPort === undefined ? undefined : await startHealthServer({ host, port: options.metricsPort, metrics: true });
  const background: Background = { db, services, workflows, worker, operator, metricsServer, graceMs: options.shutdownGraceMs ?? 0 };
  if (options.role === 'worker' || options.role === 'operator') return serveHealth(options, background, host);
  if (options.role === 'control-plane') return serveControlPlane(options, background, host);
  return serveEdge(options, background, { host, log, builtInIssuer });
}

/**
 * The services over the database, for every role but an edge that calls the control plane over
 * HTTP: stored secrets sealed under the current key (refused or logged when unreadable), the
 * development data seeded when asked, the outbox and the sweeps started, and the index builds and
 * search projections left unfinished resumed in the background. Closes what it opened when sealing fails.
 */
async function startServices(
  options: PlatformOptions,
  deps: { workflows?: Background['workflows']; builtInIssuer: () => string; log: Log },
): Promise<{ db: Db; services: Services }> {
  const { workflows, log } = deps;
  if (!options.databaseUrl) throw new Error('a database URL is required for the control plane');
  const servesApi = options.role === 'all' || options.role === 'control-plane' || (options.role === 'edge' && !options.controlPlaneUrl);
  const appClients: IdentityProviderSettings = options.identity
    ? { kind: 'external', issuer: options.identity.issuer, initialAccessToken: options.identity.registrationToken }
    : { kind: 'built-in', issuer: deps.builtInIssuer };
  const db = createDb(options.databaseUrl, { tenantDatabaseUrl: options.tenantDatabaseUrl, timeouts: options.dbTimeouts });
  const secrets = servesApi ? createSecretBox(options.secretsKey ?? devSecretsKey(), options.previousSecretsKeys) : undefined;
  const services = createServices({
    db,
    workflows,
    blobs: createLocalDirectoryBlobStore(options.blobRoot ?? stateDir('blobs')),
    identityProvider: appClients,
    clients: options.identity
      ? {
          firstParty: options.identity.firstPartyClients ? new Set(options.identity.firstPartyClients) : undefined,
          withoutClient: options.identity.tokensWithoutClient ?? 'refuse',
        }
      : undefined,
    secrets,
    ai: options.ai,
    chatStreams: options.chatStreams,
    defaultPlan: options.defaultPlan,
    invitationTtlMs: options.invitationTtlMs,
    extractionLimits: options.extractionLimits,
  });
  if (secrets) {
    try {
      await sealStoredSecretsOnStart(services, secrets, { refuseUnreadable: options.refuseUnreadableSecrets ?? false, log });
    } catch (error) {
      await workflows?.close();
      await db.close();
      throw error;
    }
  }
  if (options.seedDevelopmentData) {
    for (const tenantId of (await seedDevelopmentData(db, developmentTenants)).values()) await services.orchestrateJobs.ensureExampleWorkflows(tenantId);
  }
  services.outbox.start();
  services.sweeps.start();
  resumeUnfinishedWork(services, log);
  return { db, services };
}

/** Index builds that a stopped process left unfinished, and search projections a migration asked for, written in the background. */
function resumeUnfinishedWork(services: Services, log: Log): void {
  services.storage.indexBuilds.resume().then(
    (tenants) => tenants.length && log(`resumed the unfinished index builds of ${tenants.length} tenant${tenants.length === 1 ? '' : 's'}`),
    (error: unknown) => log('resuming unfinished index builds failed', error),
  );
  // A built-in type's search fields changed.
  services.searchReprojection.resume().then(
    (done) => done.forEach(({ key, tenants, written }) => log(`projected ${written} ${key} resource(s) of ${tenants} tenant(s) for search`)),
    (error: unknown) => log('projecting resources for search after a change of their search fields failed', error),
  );
}

/** The Temporal worker, for role `worker` and for role `all` unless `runWorker` is false; none without Temporal. */
async function startWorkerOf(options: PlatformOptions, services: Services | undefined): Promise<RunningWorker | undefined> {
  const runs = options.temporal && ((options.role === 'all' && options.runWorker !== false) || options.role === 'worker');
  return runs ? startWorker({ ...options.temporal!, services: workerServicesOf(services!), activityLog: options.activityLog }) : undefined;
}

/** The Kubernetes operator, for roles `all` and `operator` when `operator` is given. */
function startOperatorOf(options: PlatformOptions, services: Services | undefined, log: Log): RunningOperator | undefined {
  if (!options.operator || (options.role !== 'all' && options.role !== 'operator')) return undefined;
  return startOperator({
    kubeConfig: loadKubeConfig(options.operator.kubeconfigPath),
    services: operatorServicesOf(services!),
    publicUrl: options.publicUrl ?? `http://localhost:${options.port}`,
    namespace: options.operator.namespace,
    identity: options.operator.identity,
    leaseName: options.operator.leaseName,
    log,
  });
}

/**
 * Stops what runs besides the server, the database pools aside: chat answers being produced here
 * finish and are stored (by the drain's `deadline`), so that the clients that resume them
 * elsewhere read them whole; then the metrics port, the outbox, the sweeps, the projections, the
 * operator, the worker, the workflow client and the services.
 */
async function stopBackground(background: Background, deadline = Date.now()): Promise<void> {
  const { services, metricsServer, operator, worker, workflows } = background;
  if (services) await answersFinished(services, deadline);
  await metricsServer?.close();
  await services?.outbox.stop();
  await services?.sweeps.stop();
  await services?.searchReprojection.stop();
  await operator?.stop();
  await worker?.shutdown();
  await workflows?.close();
  await services?.close();
}

/** Roles `worker` and `operator`: `GET /health` (and `GET /metrics`) on `healthPort`, when given, reporting the database, the worker and the operator. */
async function serveHealth(options: PlatformOptions, background: Background, host: string): Promise<RunningPlatform> {
  const { services, worker, operator, metricsServer } = background;
  const report = async (): Promise<HealthReport> => {
    const checks: Record<string, string> = { database: (await services!.health.check()).checks.database };
    if (worker) Object.assign(checks, await worker.health());
    if (operator) Object.assign(checks, operator.health());
    const healthy = checks.database === 'ok' && (!worker || (checks.worker === 'running' && checks.temporal === 'ok')) && (!operator || checks.kubernetes === 'ok');
    return { status: healthy ? 'ok' : 'unavailable', checks };
  };
  const health = options.healthPort === undefined ? undefined : await startHealthServer({ host, port: options.healthPort, report, metrics: !metricsServer });
  return { url: health?.url ?? '', metricsUrl: metricsServer?.url, close: async () => (await health?.close(), await stopBackground(background, Date.now() + background.graceMs), await background.db!.close()) };
}

/** Role `control-plane`: the tRPC server over the API's services, requiring `controlPlaneToken` (or one made here) of every caller. */
async function serveControlPlane(options: PlatformOptions, background: Background, host: string): Promise<RunningPlatform> {
  const issuer = options.identity?.issuer ?? options.publicUrl;
  if (!issuer) throw new Error('the control plane needs the identity issuer (the edge URL for the built-in provider)');
  const verifyToken = createTokenVerifier({
    issuer,
    audience: audienceOf(options),
    jwksUrl: options.identity?.jwksUrl ?? `${issuer.replace(/\/$/, '')}/oauth2/v2.0/keys`,
    tenantClaim: options.identity?.tenantClaim,
  });
  const callerToken = options.controlPlaneToken ?? generateControlPlaneToken();
  const { services, metricsServer, graceMs } = background;
  const server = asEdgeServer(createControlPlaneServer({ services: apiServicesOf(services!), verifyToken, callerToken, serveMetrics: !metricsServer }));
  const port = await server.listen(options.port, host);
  return {
    url: `http://${host}:${port}`,
    metricsUrl: metricsServer?.url,
    controlPlaneToken: callerToken,
    close: async () => {
      const deadline = Date.now() + graceMs;
      await server.close(graceMs);
      await stopBackground(background, deadline);
      await background.db!.close();
    },
  };
}

/** The audience tokens must be issued for. */
const audienceOf = (options: PlatformOptions) => options.identity?.audience ?? options.audience ?? DEFAULT_AUDIENCE;

/**
 * Token verification at the edge: by the external provider, or by the built-in one, served at the
 * public origin. Requests are refused until `attach` is given that origin.
 */
function edgeIdentity(
  options: PlatformOptions,
  controlPlane: ControlPlane,
  context: { log: Log; builtInIssuer: { url: string } },
) {
  const mounts: Array<{ handles(p: string): boolean; handle: DevIdentityProvider['handle'] }> = [];
  let verify: (token: string) => Promise<{ sub: string }> = () => Promise.reject(new Error('identity provider not ready'));
  let publicUrl = options.publicUrl ?? '';
  let provider: DevIdentityProvider | undefined;
  return {
    /** The built-in provider's routes, once attached. */
    mounts,
    verifyToken: (token: string) => verify(token),
    publicUrl: () => publicUrl,
    provider: () => provider,
    /** Sets up token verification (and the built-in provider) for the public origin `url`. */
    async attach(url: string): Promise<void> {
      publicUrl = url;
      context.builtInIssuer.url = url;
      if (options.identity) {
        verify = withVerificationCache(createTokenVerifier(options.identity));
        return;
      }
      const audience = audienceOf(options);
      provider = await createDevIdentityProvider({
        issuer: url,
        audience,
        jwks: options.devSigningKeys,
        users: options.devUsers,
        registeredClients: registeredClientsOf(controlPlane),
        onError: (e) => context.log('identity provider error', e),
      });
      mounts.push(provider);
      verify = withVerificationCache(createTokenVerifier({ issuer: url, audience, jwks: provider.publicJwks }));
    },
  };
}

/**
 * Roles `all` and `edge`: the REST edge over the in-process control plane (or the one at
 * `controlPlaneUrl`), with rate limits kept in PostgreSQL and the sign-in routes. Token
 * verification is attached once the public origin is known: before listening on a given port,
 * after it for port 0.
 */
async function serveEdge(
  options: PlatformOptions,
  background: Background,
  context: { host: string; log: Log; builtInIssuer: { url: string } },
): Promise<RunningPlatform> {
  const { host, log } = context;
  // One connection: the counter updates of concurrent requests are pipelined on it, many per write.
  const limiterSql = createPool(options.databaseUrl ?? '', { max: 1, timeouts: options.dbTimeouts });
  const rateLimit = createRateLimits(postgresLimiters(limiterSql, { keyPrefix: options.rateLimits?.keyPrefix }), {
    ...DEFAULT_POLICIES,
    ...options.rateLimits?.policies,
  });
  const controlPlane = options.controlPlaneUrl
    ? createHttpControlPlane(options.controlPlaneUrl, options.controlPlaneToken!, { timeoutMs: options.controlPlaneTimeoutMs })
    : createInProcessControlPlane(apiServicesOf(background.services!));
  const identity = edgeIdentity(options, controlPlane, context);
  const signInKey = options.bff?.secret ?? randomBytes(32);
  const bff = bffRoutes(controlPlane, identity.verifyToken, {
    get publicUrl() {
      return identity.publicUrl();
    },
    get issuer() {
      return options.identity?.issuer ?? identity.publicUrl();
    },
    clientId: options.bff?.clientId ?? BFF_CLIENT_ID,
    clientSecret: options.bff?.clientSecret,
    // No offline_access: a session lives as long as its access token, so a refresh token would be kept unused.
    scope: options.bff?.scope ?? 'openid email profile api',
    secret: signInKey,
    alwaysSecure: options.bff?.secureCookies,
  });
  const app = createEdgeApp({
    controlPlane,
    verifyToken: identity.verifyToken,
    rateLimit,
    sessions: {
      token: async (sessionId) => (await controlPlane.query({ identity: null }, 'sessions', 'resolve', { sessionId }))?.accessToken,
      signInKey,
      publicUrl: identity.publicUrl,
      alwaysSecure: options.bff?.secureCookies,
    },
    plugins: [bff, ...(options.extraPlugins ?? [])],
    onServerError: (error, request) => log(`server error on ${request.method} ${request.url}`, error),
    trustedProxies: options.trustedProxies?.length ? trustedProxies(options.trustedProxies) : undefined,
    serveMetrics: !background.metricsServer,
    sseHeartbeatMs: options.sseHeartbeatMs,
  });
  const server = createEdgeServer(app, identity.mounts, { accessLog: options.accessLog });
  const urlFor = (port: number) => options.publicUrl ?? `http://${host === '0.0.0.0' ? 'localhost' : host}:${port}`;
  // With a known origin, sign-in is ready before the first request can arrive; with port 0 the
  // origin is known only once listening (tests, which wait for this function before calling).
  if (options.port !== 0) await identity.attach(urlFor(options.port));
  const release = async (deadline?: number) => {
    await stopBackground(background, deadline);
    await limiterSql.end({ timeout: 5 });
    await background.db?.close();
  };
  const port = await server.listen(options.port, host).catch(async (error: unknown) => {
    await release();
    throw error;
  });
  const url = urlFor(port);
  if (options.port === 0) await identity.attach(url);
  return {
    url,
    metricsUrl: background.metricsServer?.url,
    identityProvider: identity.provider(),
    close: async () => {
      const deadline = Date.now() + background.graceMs;
      await server.close(background.graceMs);
      await release(deadline);
    },
  };
}
