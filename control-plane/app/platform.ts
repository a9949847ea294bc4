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
import { startWorker } from '../../workers/worker.ts';
import type { ActivityLog } from '../../workers/activity-trace.ts';
import { loadKubeConfig } from '../operator/kube.ts';
import { startOperator } from '../operator/operator.ts';
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

/** Resolves once no chat answer is being produced in this process, or after `graceMs`. */
async function answersFinished(services: Services, graceMs: number): Promise<void> {
  const deadline = Date.now() + graceMs;
  while (services.chat.producing() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** The clients apps registered (v4 provisioning/idp-apps), which the built-in provider asks the control plane for. */
function registeredClientsOf(controlPlane: ControlPlane): RegisteredClients {
  return {
    find: async (clientId) => (await controlPlane.query({ identity: null }, 'idpApps', 'providerClient', { clientId })) ?? undefined,
    verifySecret: (clientId, secret) => controlPlane.query({ identity: null }, 'idpApps', 'verifySecret', { clientId, secret }),
  };
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
  const audience = options.identity?.audience ?? options.audience ?? DEFAULT_AUDIENCE;
  const log = options.log ?? (() => {});
  let db: Db | undefined;
  let services: Services | undefined;
  const workflows = options.temporal ? createTemporalWorkflows(options.temporal) : undefined;
  const needsDb = options.role !== 'edge' || !options.controlPlaneUrl;
  // The built-in provider's issuer is the edge's origin, known once it listens when its port is picked then.
  let builtInIssuer = options.publicUrl ?? `http://localhost:${options.port}`;
  const appClients: IdentityProviderSettings = options.identity
    ? { kind: 'external', issuer: options.identity.issuer, initialAccessToken: options.identity.registrationToken }
    : { kind: 'built-in', issuer: () => builtInIssuer };
  const servesApi = options.role === 'all' || options.role === 'control-plane' || (options.role === 'edge' && !options.controlPlaneUrl);
  if (needsDb) {
    if (!options.databaseUrl) throw new Error('a database URL is required for the control plane');
    db = createDb(options.databaseUrl, { tenantDatabaseUrl: options.tenantDatabaseUrl, timeouts: options.dbTimeouts });
    const secrets = servesApi ? createSecretBox(options.secretsKey ?? devSecretsKey(), options.previousSecretsKeys) : undefined;
    services = createServices({
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
    // Index builds that a stopped process left unfinished, built in the background.
    services.storage.indexBuilds.resume().then(
      (tenants) => tenants.length && log(`resumed the unfinished index builds of ${tenants.length} tenant${tenants.length === 1 ? '' : 's'}`),
      (error: unknown) => log('resuming unfinished index builds failed', error),
    );
    // Search projections that a migration asked for (a built-in type's search fields changed), written in the background.
    services.searchReprojection.resume().then(
      (done) => done.forEach(({ key, tenants, written }) => log(`projected ${written} ${key} resource(s) of ${tenants} tenant(s) for search`)),
      (error: unknown) => log('projecting resources for search after a change of their search fields failed', error),
    );
  }
  const worker =
    options.temporal && ((options.role === 'all' && options.runWorker !== false) || options.role === 'worker')
      ? await startWorker({ ...options.temporal, services: workerServicesOf(services!), activityLog: options.activityLog })
      : undefined;
  const operator =
    options.operator && (options.role === 'all' || options.role === 'operator')
      ? startOperator({
          kubeConfig: loadKubeConfig(options.operator.kubeconfigPath),
          services: operatorServicesOf(services!),
          publicUrl: options.publicUrl ?? `http://localhost:${options.port}`,
          namespace: options.operator.namespace,
          identity: options.operator.identity,
          leaseName: options.operator.leaseName,
          log,
        })
      : undefined;
  const metricsServer = options.metricsPort === undefined ? undefined : await startHealthServer({ host, port: options.metricsPort, metrics: true });
  const ownMetricsPort = !!metricsServer;
  const graceMs = options.shutdownGraceMs ?? 0;
  const closeBackground = async () => {
    // Chat answers being produced here finish and are stored (within the grace), so that the
    // clients that resume them elsewhere read them whole.
    if (services) await answersFinished(services, graceMs);
    await metricsServer?.close();
    await services?.outbox.stop();
    await services?.sweeps.stop();
    await services?.searchReprojection.stop();
    await operator?.stop();
    await worker?.shutdown();
    await workflows?.close();
    await services?.close();
  };

  if (options.role === 'worker' || options.role === 'operator') {
    const report = async (): Promise<HealthReport> => {
      const checks: Record<string, string> = { database: (await services!.health.check()).checks.database };
      if (worker) Object.assign(checks, await worker.health());
      if (operator) Object.assign(checks, operator.health());
      const healthy = checks.database === 'ok' && (!worker || (checks.worker === 'running' && checks.temporal === 'ok')) && (!operator || checks.kubernetes === 'ok');
      return { status: healthy ? 'ok' : 'unavailable', checks };
    };
    const health = options.healthPort === undefined ? undefined : await startHealthServer({ host, port: options.healthPort, report, metrics: !ownMetricsPort });
    return { url: health?.url ?? '', metricsUrl: metricsServer?.url, close: async () => (await health?.close(), await closeBackground(), await db!.close()) };
  }

  if (options.role === 'control-plane') {
    const issuer = options.identity?.issuer ?? options.publicUrl;
    if (!issuer) throw new Error('the control plane needs the identity issuer (the edge URL for the built-in provider)');
    const verifyToken = createTokenVerifier({
      issuer,
      audience,
      jwksUrl: options.identity?.jwksUrl ?? `${issuer.replace(/\/$/, '')}/oauth2/v2.0/keys`,
      tenantClaim: options.identity?.tenantClaim,
    });
    const callerToken = options.controlPlaneToken ?? generateControlPlaneToken();
    const server = asEdgeServer(createControlPlaneServer({ services: apiServicesOf(services!), verifyToken, callerToken, serveMetrics: !ownMetricsPort }));
    const port = await server.listen(options.port, host);
    return { url: `http://${host}:${port}`, metricsUrl: metricsServer?.url, controlPlaneToken: callerToken, close: async () => (await server.close(graceMs), await closeBackground(), await db!.close()) };
  }

  const mounts: Array<{ handles(p: string): boolean; handle: DevIdentityProvider['handle'] }> = [];
  let verify: (token: string) => Promise<{ sub: string }> = () => Promise.reject(new Error('identity provider not ready'));
  // One connection: the counter updates of concurrent requests are pipelined on it, many per write.
  const limiterSql = createPool(options.databaseUrl ?? '', { max: 1, timeouts: options.dbTimeouts });
  const rateLimit = createRateLimits(postgresLimiters(limiterSql, { keyPrefix: options.rateLimits?.keyPrefix }), {
    ...DEFAULT_POLICIES,
    ...options.rateLimits?.policies,
  });
  const controlPlane = options.controlPlaneUrl ? createHttpControlPlane(options.controlPlaneUrl, options.controlPlaneToken!) : createInProcessControlPlane(apiServicesOf(services!));
  const verifyToken = (token: string) => verify(token);
  let publicUrl = options.publicUrl ?? '';
  const signInKey = options.bff?.secret ?? randomBytes(32);
  const bff = bffRoutes(controlPlane, verifyToken, {
    get publicUrl() {
      return publicUrl;
    },
    get issuer() {
      return options.identity?.issuer ?? publicUrl;
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
    verifyToken,
    rateLimit,
    sessions: {
      token: async (sessionId) => (await controlPlane.query({ identity: null }, 'sessions', 'resolve', { sessionId }))?.accessToken,
      signInKey,
      publicUrl: () => publicUrl,
      alwaysSecure: options.bff?.secureCookies,
    },
    plugins: [bff, ...(options.extraPlugins ?? [])],
    onServerError: (error, request) => log(`server error on ${request.method} ${request.url}`, error),
    trustedProxies: options.trustedProxies?.length ? trustedProxies(options.trustedProxies) : undefined,
    serveMetrics: !ownMetricsPort,
    sseHeartbeatMs: options.sseHeartbeatMs,
  });
  const server = createEdgeServer(app, mounts, { accessLog: options.accessLog });
  let identityProvider: DevIdentityProvider | undefined;
  /** Sets up token verification (and the built-in provider) for the public origin `url`. */
  const attachIdentity = async (url: string) => {
    publicUrl = url;
    builtInIssuer = url;
    if (options.identity) {
      verify = withVerificationCache(createTokenVerifier(options.identity));
    } else {
      identityProvider = await createDevIdentityProvider({
        issuer: url,
        audience,
        jwks: options.devSigningKeys,
        users: options.devUsers,
        registeredClients: registeredClientsOf(controlPlane),
        onError: (e) => log('identity provider error', e),
      });
      mounts.push(identityProvider);
      verify = withVerificationCache(createTokenVerifier({ issuer: url, audience, jwks: identityProvider.publicJwks }));
    }
  };
  const urlFor = (port: number) => options.publicUrl ?? `http://${host === '0.0.0.0' ? 'localhost' : host}:${port}`;
  // With a known origin, sign-in is ready before the first request can arrive; with port 0 the
  // origin is known only once listening (tests, which wait for this function before calling).
  if (options.port !== 0) await attachIdentity(urlFor(options.port));
  const release = async () => {
    await closeBackground();
    await limiterSql.end({ timeout: 5 });
    await db?.close();
  };
  const port = await server.listen(options.port, host).catch(async (error: unknown) => {
    await release();
    throw error;
  });
  const url = urlFor(port);
  if (options.port === 0) await attachIdentity(url);
  return {
    url,
    metricsUrl: metricsServer?.url,
    identityProvider,
    close: async () => {
      await server.close(graceMs);
      await release();
    },
  };
}
