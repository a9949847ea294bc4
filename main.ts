import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { JSONWebKeySet } from 'jose';
import pino from 'pino';
import type { AccessLog } from './api-edge/observability.ts';
import type { ActivityLog } from './workers/activity-trace.ts';
import { bunRuntime } from './api-edge/server.ts';
import { migrate } from './control-plane/app/migrate.ts';
import { handOffToNode, isNodeRole, spawnNodeRole, type NodeRole } from './control-plane/app/node-roles.ts';
import { startPlatform, type PlatformOptions, type PlatformRole } from './control-plane/app/platform.ts';
import { UnreadableSecretsError } from './control-plane/app/stored-secrets.ts';
import { DEFAULT_INVITATION_TTL_MS } from './control-plane/tenants/tenant-users.ts';
import { DEFAULT_TASK_QUEUE } from './control-plane/temporal/workflow-contract.ts';
import { PLANS, type Plan } from './control-plane/capabilities/capabilities.schema.ts';
import { controlPlaneTokenProblem } from './control-plane/app/control-plane-token.ts';
import { DEFAULT_DB_TIMEOUTS, isConnectionLost, type DbTimeouts } from './control-plane/db/faults.ts';
import { DEFAULT_CONTROL_PLANE_TIMEOUT_MS } from './api-edge/control-plane-http.ts';
import { DEFAULT_SHUTDOWN_GRACE_SECONDS } from './api-edge/drain.ts';
import { EXTRACTION_HEAP_MB, EXTRACTION_TIMEOUT_MS } from './control-plane/extract/extraction.ts';

/**
 * The production entry point: reads the configuration from the environment and runs one role (or
 * all of them). It starts no database or Temporal server: `scripts/start.ts` (`npm start`) ensures
 * the local ones, then calls {@link runMain}.
 */

export const ROLES: readonly PlatformRole[] = ['all', 'edge', 'control-plane', 'worker', 'operator'];

const MAIN_SCRIPT = fileURLToPath(import.meta.url);
/** How long a Node role may take to stop (the chart gives the worker 60 s) before it is killed. */
const CHILD_STOP_MS = 60_000;
/** How often a role started beside the platform process checks that its parent still runs. */
const PARENT_CHECK_MS = 1_000;

/** A setting that is missing or malformed: reported on one line, exit code 2. */
export class ConfigError extends Error {}

const DAY_MS = 24 * 60 * 60 * 1000;

/** A failure to start whose message says all there is to say (no stack trace). */
class StartupError extends Error {}

/** What a caller that prepared local services adds to the environment's settings. */
export interface LocalSettings {
  /** Private signing keys of the built-in identity provider, kept across restarts. */
  devSigningKeys?: JSONWebKeySet;
  /** The Temporal dev server's web UI, shown in the ready message. */
  temporalUiUrl?: string;
  /** The credential of the control plane's port that the local roles share, when `CONTROL_PLANE_TOKEN` is unset (never in production). */
  controlPlaneToken?: string;
}

/** The process's log: lines on stderr, JSON (pino) in production; `announce` is the ready message. */
export interface ProcessLog {
  (message: string, detail?: unknown): void;
  /** A failure that stops the process. */
  error(message: string): void;
  announce(headline: string, details?: Record<string, string>): void;
  /** The edge's access log (one JSON line per request), in production only: on a terminal it stays quiet. */
  requests?: AccessLog;
  /** The worker's activity log (one JSON line per activity run, with its trace id), in production only. */
  activities?: ActivityLog;
}

/**
 * Human-readable lines for a terminal (`npm start`); with `NODE_ENV=production` one JSON object per
 * line on stderr, as log collectors read them. The ready message goes to stdout on a terminal.
 */
export function processLog(env: NodeJS.ProcessEnv, role: string): ProcessLog {
  if (env.NODE_ENV === 'production') {
    const logger = pino({ base: { pid: process.pid, role }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ fd: 2, sync: true }));
    const log = (message: string, detail?: unknown) => (detail === undefined ? logger.info(message) : logger.error({ err: detail }, message));
    return Object.assign(log, {
      error: (message: string) => logger.error(message),
      announce: (headline: string, details?: Record<string, string>) => logger.info(details ?? {}, headline),
      requests: (entry: Parameters<AccessLog>[0]) => logger.info(entry, 'request'),
      activities: (entry: Parameters<ActivityLog>[0]) => (entry.outcome === 'failed' ? logger.warn(entry, 'activity') : logger.info(entry, 'activity')),
    });
  }
  const log = (message: string, detail?: unknown) =>
    console.error(detail === undefined ? message : `${message}: ${String((detail as Error)?.stack ?? detail)}`);
  const announce = (headline: string, details: Record<string, string> = {}) =>
    console.log([headline, ...Object.entries(details).map(([name, value]) => `  ${`${name}:`.padEnd(15)}${value}`)].join('\n'));
  return Object.assign(log, { error: (message: string) => console.error(message), announce });
}

/** The role from `--role`, else `SVC_ROLE`, else `all`. */
export function parseRole(argv: readonly string[], env: NodeJS.ProcessEnv): PlatformRole {
  let role: string | undefined;
  try {
    ({ values: { role } } = parseArgs({ args: [...argv], options: { role: { type: 'string' } }, allowPositionals: false }));
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  role ??= env.SVC_ROLE || 'all';
  if (!ROLES.includes(role as PlatformRole)) throw new ConfigError(`unknown role "${role}": use all, edge, control-plane, worker or operator`);
  return role as PlatformRole;
}

/** A port number from the environment, or `fallback` when unset. */
function portSetting(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) throw new ConfigError(`${name} must be a port number (0-65535), not "${value}"`);
  return port;
}

/** Per-minute budgets from `RATE_LIMIT_RESOURCES_PER_MINUTE`, `RATE_LIMIT_API_PER_MINUTE`, `RATE_LIMIT_UPLOADS_PER_MINUTE` (document uploads) and `RATE_LIMIT_WEBHOOKS_PER_MINUTE` (inbound deliveries per endpoint), when set. */
function rateLimitPolicies(env: NodeJS.ProcessEnv) {
  const perMinute = (name: string) => {
    const value = env[name];
    if (!value) return undefined;
    if (!/^\d+$/.test(value) || Number(value) === 0) throw new ConfigError(`${name} must be a positive whole number, not "${value}"`);
    return { points: Number(value), durationSeconds: 60 };
  };
  const resources = perMinute('RATE_LIMIT_RESOURCES_PER_MINUTE');
  const api = perMinute('RATE_LIMIT_API_PER_MINUTE');
  const uploads = perMinute('RATE_LIMIT_UPLOADS_PER_MINUTE');
  const webhooks = perMinute('RATE_LIMIT_WEBHOOKS_PER_MINUTE');
  return { ...(resources ? { resources } : {}), ...(api ? { users: api } : {}), ...(uploads ? { uploads } : {}), ...(webhooks ? { webhooks } : {}) };
}

/**
 * The operator runs when a kubeconfig is reachable: the files of the `KUBECONFIG` list that exist
 * (merged), else `~/.kube/config`, else in a cluster.
 */
function operatorSettings(env: NodeJS.ProcessEnv): PlatformOptions['operator'] {
  const home = join(homedir(), '.kube', 'config');
  const listed = (env.KUBECONFIG ?? '').split(delimiter).filter((file) => file && existsSync(file));
  const kubeconfigPath = env.KUBECONFIG ? listed.join(delimiter) || undefined : existsSync(home) ? home : undefined;
  if (!kubeconfigPath && !env.KUBERNETES_SERVICE_HOST) return undefined;
  return { kubeconfigPath, namespace: env.OPERATOR_NAMESPACE, identity: env.POD_NAME, leaseName: env.OPERATOR_LEASE_NAME };
}

/**
 * The backend-for-frontend's client at the identity provider, and the key of its sign-in cookie,
 * which every edge instance must share (the chart gives it from a Secret); without one, each
 * process makes its own.
 */
function bffSettings(env: NodeJS.ProcessEnv): PlatformOptions['bff'] {
  const secret = env.SIGN_IN_KEY ? Buffer.from(env.SIGN_IN_KEY, 'base64') : undefined;
  if (secret && secret.length !== 32) throw new ConfigError('SIGN_IN_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32)');
  return {
    clientId: env.BFF_CLIENT_ID || undefined,
    clientSecret: env.BFF_CLIENT_SECRET || undefined,
    scope: env.BFF_SCOPE || undefined,
    secret,
    // In production the session cookies are Secure `__Host-` cookies whatever PUBLIC_URL says (decision 0185).
    secureCookies: env.NODE_ENV === 'production',
  };
}

/** Whether browsers would refuse the production platform's Secure cookies at `publicUrl`: plain http on a host that is not loopback. */
function insecurePublicUrl(publicUrl: string): boolean {
  try {
    const { protocol, hostname } = new URL(publicUrl);
    return protocol === 'http:' && hostname !== 'localhost' && !hostname.endsWith('.localhost') && hostname !== '[::1]' && !/^127\./.test(hostname);
  } catch {
    return false;
  }
}

/** Whether `role` runs the API's services itself (not an edge that calls a control plane elsewhere). */
const servesApi = (role: PlatformRole, env: NodeJS.ProcessEnv) => role === 'all' || role === 'control-plane' || (role === 'edge' && !env.CONTROL_PLANE_URL);

/**
 * The operator key that seals stored secrets at rest (`SECRETS_KEY`, 32 bytes base64), for the
 * roles that serve the API, and the keys it replaces while the operator changes it
 * (`SECRETS_KEY_PREVIOUS`, comma-separated). Closed by default: in production they refuse to
 * start without it; elsewhere the local development key is used (control-plane/app/dev-secrets-key.ts).
 */
function secretsKeySettings(role: PlatformRole, env: NodeJS.ProcessEnv): Pick<PlatformOptions, 'secretsKey' | 'previousSecretsKeys' | 'refuseUnreadableSecrets'> {
  if (!servesApi(role, env)) return {};
  if (!env.SECRETS_KEY) {
    if (env.SECRETS_KEY_PREVIOUS) throw new ConfigError('SECRETS_KEY_PREVIOUS needs SECRETS_KEY: the new key, under which the secrets sealed with the previous ones are sealed again');
    if (env.NODE_ENV !== 'production') return {};
    throw new ConfigError(`SECRETS_KEY is required for role ${role} in production: 32 bytes, base64-encoded (openssl rand -base64 32), the key that seals webhook secrets at rest`);
  }
  const key = Buffer.from(env.SECRETS_KEY, 'base64');
  if (key.length !== 32) throw new ConfigError('SECRETS_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32)');
  const previous = (env.SECRETS_KEY_PREVIOUS ?? '').split(',').map((value) => value.trim()).filter(Boolean);
  const previousSecretsKeys = previous.map((value, i) => {
    const old = Buffer.from(value, 'base64');
    if (old.length !== 32) throw new ConfigError(`SECRETS_KEY_PREVIOUS holds a key (number ${i + 1}) that is not 32 bytes, base64-encoded: list the former SECRETS_KEY values, separated by commas`);
    if (old.equals(key)) throw new ConfigError('SECRETS_KEY_PREVIOUS repeats SECRETS_KEY: list only the keys it replaces');
    return old;
  });
  return { secretsKey: key, previousSecretsKeys, refuseUnreadableSecrets: env.NODE_ENV === 'production' };
}

/** The OpenAI-compatible endpoint of `AI_BASE_URL`, `AI_API_KEY` and `AI_MODEL`: all three, or none (the local model). */
function aiSettings(env: NodeJS.ProcessEnv): PlatformOptions['ai'] {
  const names = ['AI_BASE_URL', 'AI_API_KEY', 'AI_MODEL'] as const;
  const given = names.filter((name) => env[name]);
  if (given.length === 0) return undefined;
  if (given.length < names.length) throw new ConfigError(`${names.filter((name) => !env[name]).join(' and ')} must be set with ${given.join(' and ')}: an OpenAI-compatible endpoint needs all three`);
  try {
    new URL(env.AI_BASE_URL!);
  } catch {
    throw new ConfigError('AI_BASE_URL is not a URL: use the endpoint up to its version, e.g. https://models.example/v1');
  }
  return { baseUrl: env.AI_BASE_URL!, apiKey: env.AI_API_KEY!, model: env.AI_MODEL! };
}

/** The roles that verify callers' tokens, and so need an identity provider. */
const AUTHENTICATING_ROLES: readonly PlatformRole[] = ['all', 'edge', 'control-plane'];

/**
 * The external OIDC provider of `AUTH_ISSUER` and `AUTH_JWKS_URL`: both, or neither (the built-in
 * provider). In production a role that authenticates callers refuses to run without one: the
 * built-in provider signs in whoever types an e-mail address.
 */
function identitySettings(role: PlatformRole, env: NodeJS.ProcessEnv): PlatformOptions['identity'] {
  const { AUTH_ISSUER: issuer, AUTH_JWKS_URL: jwksUrl } = env;
  if (issuer && !jwksUrl) throw new ConfigError('AUTH_JWKS_URL must be set with AUTH_ISSUER: the provider\'s JSON Web Key Set URL');
  if (jwksUrl && !issuer) throw new ConfigError('AUTH_ISSUER must be set with AUTH_JWKS_URL: the provider\'s issuer');
  if (!issuer || !jwksUrl) {
    if (env.NODE_ENV === 'production' && AUTHENTICATING_ROLES.includes(role)) {
      throw new ConfigError(
        'AUTH_ISSUER and AUTH_JWKS_URL are required in production: the built-in sign-in checks no password and is for local development only (without NODE_ENV=production it runs)',
      );
    }
    return undefined;
  }
  return {
    issuer,
    audience: env.AUTH_AUDIENCE ?? 'urn:svc:api',
    jwksUrl,
    tenantClaim: env.AUTH_TENANT_CLAIM,
    registrationToken: env.AUTH_REGISTRATION_TOKEN || undefined,
    firstPartyClients: firstPartyClientsSetting(role, env),
    tokensWithoutClient: tokensWithoutClientSetting(env),
  };
}

/**
 * `AUTH_FIRST_PARTY_CLIENTS`: the platform's own clients at an external provider; `*` (or, outside
 * production, unset) makes every client no tenant registered one of them. Closed by default: in
 * production a role that looks clients up (one that serves the API) refuses to start without it.
 */
function firstPartyClientsSetting(role: PlatformRole, env: NodeJS.ProcessEnv): string[] | undefined {
  const clients = listSetting(env.AUTH_FIRST_PARTY_CLIENTS);
  if (clients?.includes('*')) {
    if (clients.length > 1) throw new ConfigError(`AUTH_FIRST_PARTY_CLIENTS is "*" alone or a list of client ids, not "${env.AUTH_FIRST_PARTY_CLIENTS}"`);
    return undefined;
  }
  if (!clients && env.NODE_ENV === 'production' && servesApi(role, env)) {
    throw new ConfigError(
      'AUTH_FIRST_PARTY_CLIENTS is required with AUTH_ISSUER in production: the client ids of the platform\'s own clients at the provider, comma-separated (e.g. svc-cli,svc-bff); a token of any other client that no tenant registered is refused. "*" accepts every such client as the platform\'s own',
    );
  }
  return clients;
}

/** A comma-separated setting's values; undefined when it names none. */
function listSetting(value: string | undefined): string[] | undefined {
  const values = value?.split(',').map((item) => item.trim()).filter(Boolean);
  return values?.length ? values : undefined;
}

/** `AUTH_TOKENS_WITHOUT_CLIENT`: what a token naming no client is; refused unless set to `first-party`. */
function tokensWithoutClientSetting(env: NodeJS.ProcessEnv): 'refuse' | 'first-party' {
  const value = env.AUTH_TOKENS_WITHOUT_CLIENT || 'refuse';
  if (value !== 'refuse' && value !== 'first-party') {
    throw new ConfigError(`AUTH_TOKENS_WITHOUT_CLIENT must be "refuse" or "first-party", not "${value}"`);
  }
  return value;
}

/**
 * The credential of the control plane's port (`CONTROL_PLANE_TOKEN`), for the roles that use it: the
 * control plane requires it of every caller, and in production will not start without one (elsewhere
 * it makes one and says so); an edge with `CONTROL_PLANE_URL` sends it, and needs it everywhere.
 */
function controlPlaneTokenSetting(role: PlatformRole, env: NodeJS.ProcessEnv, local: LocalSettings): string | undefined {
  const calls = role === 'edge' && !!env.CONTROL_PLANE_URL;
  if (role !== 'control-plane' && !calls) return undefined;
  const production = env.NODE_ENV === 'production';
  const token = env.CONTROL_PLANE_TOKEN || (production ? undefined : local.controlPlaneToken);
  if (token) {
    const problem = controlPlaneTokenProblem(token);
    if (problem) throw new ConfigError(`CONTROL_PLANE_TOKEN ${problem}`);
    return token;
  }
  if (calls) throw new ConfigError("CONTROL_PLANE_TOKEN is required with CONTROL_PLANE_URL: the control plane's credential, the same value it was given (or printed when it made one)");
  if (production) throw new ConfigError('CONTROL_PLANE_TOKEN is required for the control-plane role in production: the credential the edge calls it with, at least 32 bytes (openssl rand -base64 32)');
  return undefined;
}

/** A whole number setting of at least `min`, or `fallback` when unset. */
function wholeSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min) throw new ConfigError(`${name} must be a whole number${min ? ` of at least ${min}` : ''}, not "${value}"`);
  return Number(value);
}

/** The database timeouts of every pool (docs/behaviour.md, "Database faults"). */
function dbTimeoutSettings(env: NodeJS.ProcessEnv): DbTimeouts {
  return {
    connectSeconds: wholeSetting(env, 'DB_CONNECT_TIMEOUT_SECONDS', DEFAULT_DB_TIMEOUTS.connectSeconds, 1),
    idleSeconds: wholeSetting(env, 'DB_IDLE_TIMEOUT_SECONDS', DEFAULT_DB_TIMEOUTS.idleSeconds, 1),
    statementMs: wholeSetting(env, 'DB_STATEMENT_TIMEOUT_MS', DEFAULT_DB_TIMEOUTS.statementMs),
    acquireMs: wholeSetting(env, 'DB_ACQUIRE_TIMEOUT_MS', DEFAULT_DB_TIMEOUTS.acquireMs, 1),
  };
}

/** The platform's options for `role` from the environment; throws {@link ConfigError} on a missing or malformed setting. */
export function readConfig(role: PlatformRole, env: NodeJS.ProcessEnv, local: LocalSettings = {}): Omit<PlatformOptions, 'log' | 'runWorker'> {
  const databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) throw new ConfigError('DATABASE_URL is required: the PostgreSQL URL, e.g. postgres://svc:secret@db:5432/svc (`npm start` runs a local one instead)');
  try {
    new URL(databaseUrl);
  } catch {
    throw new ConfigError('DATABASE_URL is not a URL: use postgres://user:password@host:5432/database');
  }
  if (role === 'worker' && !env.TEMPORAL_ADDRESS) throw new ConfigError('TEMPORAL_ADDRESS is required for the worker role: the Temporal frontend (host:port)');
  const identity = identitySettings(role, env);
  const port = portSetting(env, 'PORT', role === 'control-plane' ? 8081 : 8080);
  return {
    role,
    databaseUrl,
    tenantDatabaseUrl: env.TENANT_DATABASE_URL || undefined,
    host: env.HOST ?? '0.0.0.0',
    port,
    publicUrl: env.PUBLIC_URL ?? (role === 'control-plane' ? env.EDGE_URL ?? 'http://localhost:8080' : `http://localhost:${port}`),
    controlPlaneUrl: role === 'edge' ? env.CONTROL_PLANE_URL : undefined,
    controlPlaneToken: controlPlaneTokenSetting(role, env, local),
    controlPlaneTimeoutMs: role === 'edge' && env.CONTROL_PLANE_URL ? wholeSetting(env, 'CONTROL_PLANE_TIMEOUT_SECONDS', DEFAULT_CONTROL_PLANE_TIMEOUT_MS / 1000, 1) * 1000 : undefined,
    identity,
    bff: bffSettings(env),
    ...secretsKeySettings(role, env),
    trustedProxies: env.TRUSTED_PROXIES?.split(','),
    blobRoot: env.SVC_BLOB_DIR,
    temporal:
      role !== 'edge' && env.TEMPORAL_ADDRESS
        ? { address: env.TEMPORAL_ADDRESS, namespace: env.TEMPORAL_NAMESPACE ?? 'default', taskQueue: env.TEMPORAL_TASK_QUEUE ?? DEFAULT_TASK_QUEUE }
        : undefined,
    devSigningKeys: identity ? undefined : local.devSigningKeys,
    // Seeded users sign in through the built-in provider alone, which production never runs.
    seedDevelopmentData: !identity && env.NODE_ENV !== 'production' && env.SVC_DEV_SEED !== 'false',
    rateLimits: { policies: rateLimitPolicies(env) },
    operator: role === 'all' || role === 'operator' ? operatorSettings(env) : undefined,
    // The chart sets HEALTH_PORT; locally the two roles get ports of their own, and 0 picks a free one.
    healthPort: role === 'worker' || role === 'operator' ? portSetting(env, 'HEALTH_PORT', role === 'worker' ? 8090 : 8091) : undefined,
    // Unset: GET /metrics is served on the API port (edge, control plane) or the health port (worker, operator).
    metricsPort: env.METRICS_PORT ? portSetting(env, 'METRICS_PORT', 0) : undefined,
    ai: role === 'edge' && env.CONTROL_PLANE_URL ? undefined : aiSettings(env),
    defaultPlan: defaultPlanSetting(env),
    dbTimeouts: dbTimeoutSettings(env),
    shutdownGraceMs: wholeSetting(env, 'SHUTDOWN_GRACE_SECONDS', DEFAULT_SHUTDOWN_GRACE_SECONDS) * 1000,
    invitationTtlMs: wholeSetting(env, 'INVITATION_TTL_DAYS', DEFAULT_INVITATION_TTL_MS / DAY_MS, 1) * DAY_MS,
    extractionLimits: {
      timeoutMs: wholeSetting(env, 'EXTRACTION_TIMEOUT_MS', EXTRACTION_TIMEOUT_MS, 1),
      maxHeapMb: wholeSetting(env, 'EXTRACTION_HEAP_MB', EXTRACTION_HEAP_MB, 16),
    },
  };
}

/** `DEFAULT_PLAN`: the plan of tenants a platform administrator set none for, when set. */
function defaultPlanSetting(env: NodeJS.ProcessEnv): Plan | undefined {
  const plan = env.DEFAULT_PLAN;
  if (plan === undefined || plan === '') return undefined;
  if (!(PLANS as readonly string[]).includes(plan)) throw new ConfigError(`DEFAULT_PLAN must be one of ${PLANS.join(', ')}, not "${plan}"`);
  return plan as Plan;
}

/** `url` without its password, for messages. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/** Applies the pending migrations (serialized across processes by an advisory lock), with a clear error when the database cannot be reached. */
async function migrateOnStart(databaseUrl: string, log: ProcessLog): Promise<void> {
  let applied: string[];
  try {
    applied = await migrate(databaseUrl);
  } catch (error) {
    const code = (error as { code?: string }).code;
    const unreachable = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'CONNECT_TIMEOUT'].includes(code ?? '');
    throw new StartupError(
      unreachable
        ? `cannot reach PostgreSQL at ${redact(databaseUrl)} (${code}): DATABASE_URL must name a running server`
        : `cannot migrate the database at ${redact(databaseUrl)}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (applied.length) log(`applied migrations: ${applied.join(', ')}`);
}

/**
 * Runs the role named by `argv` (`--role`) with the settings of `env` until SIGINT or SIGTERM, then
 * stops it and exits. A missing or malformed setting exits with code 2 before anything starts; a
 * failure to start exits with code 1. Never starts a database or Temporal server. Roles other than
 * the edge apply pending migrations first. On Bun, the worker and operator roles are handed to Node,
 * and role `all` runs them as Node processes beside this one.
 */
export async function runMain(argv: readonly string[], env: NodeJS.ProcessEnv, local: LocalSettings = {}): Promise<void> {
  let role: PlatformRole;
  let config: ReturnType<typeof readConfig>;
  let log = processLog(env, env.SVC_ROLE || 'all');
  try {
    role = parseRole(argv, env);
    log = processLog(env, role);
    if (bunRuntime && isNodeRole(role)) return await handOffToNode(MAIN_SCRIPT, role, env);
    config = readConfig(role, env, local);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    log.error(error.message);
    process.exit(2);
  }
  const { publicUrl, temporal, operator } = config;
  /** On Bun, role `all` serves the edge and control plane here and runs the worker and operator as Node processes: their SDKs support Node only. */
  const nodeChildren = !!bunRuntime && role === 'all';
  let stopping = false;
  const children: ChildProcess[] = [];
  let platform: Awaited<ReturnType<typeof startPlatform>> | undefined;

  /** Stops the Node roles (each finishes its work first) and this process's platform, then exits. */
  const stop = async (exitCode: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    const ended = children
      .filter((c) => c.exitCode === null && c.signalCode === null)
      .map((c) => {
        const exited = once(c, 'exit');
        c.kill('SIGTERM');
        const kill = setTimeout(() => c.kill('SIGKILL'), CHILD_STOP_MS);
        return exited.finally(() => clearTimeout(kill));
      });
    await Promise.allSettled([platform?.close(), ...ended]);
    process.exit(exitCode);
  };

  /** Runs a Node role as a child sharing this process's settings and stderr; the platform stops if it ends. */
  const startNodeRole = (childRole: NodeRole, childEnv: Record<string, string>): ChildProcess => {
    // Their health servers are for this process's own use: a free port on the loopback address.
    const child = spawnNodeRole(MAIN_SCRIPT, childRole, { ...env, ...childEnv, HOST: '127.0.0.1', HEALTH_PORT: '0', METRICS_PORT: '' }, ['ignore', 'ignore', 'inherit']);
    child.once('exit', (code, signal) => {
      if (stopping) return;
      log(`the ${childRole} process ended (${signal ?? `exit code ${code}`}); stopping the platform`);
      void stop(1);
    });
    return child;
  };

  // A role that `npm start` runs beside it stops when that process is gone, however it ended (also while it starts).
  const parentPid = Number(env.SVC_PARENT_PID);
  if (parentPid) {
    setInterval(() => {
      if (process.ppid === parentPid) return;
      log('the platform process that started this one is gone; stopping');
      void stop(0);
    }, PARENT_CHECK_MS).unref();
  }

  // postgres.js rejects every statement queued on a connection it loses, whether anyone still
  // waits for it or not: a lost connection is a fault answered with 503, never one that ends the
  // process. Any other unhandled rejection still does.
  process.on('unhandledRejection', (reason) => {
    if (!isConnectionLost(reason)) throw reason;
    log('a statement on a lost database connection failed with nobody waiting for it', reason);
  });

  try {
    if (role !== 'edge') await migrateOnStart(config.databaseUrl!, log);
    if (role !== 'edge' && !temporal) log('TEMPORAL_ADDRESS is not set: executions and provisioning are unavailable');
    if (config.bff?.secureCookies && (role === 'all' || role === 'edge') && insecurePublicUrl(publicUrl!)) {
      log(`PUBLIC_URL ${publicUrl} is not https: browser sign-in needs https (its cookies are Secure in production); API calls with bearer tokens are unaffected`);
    }
    if (env.OTEL_EXPORTER_OTLP_ENDPOINT) log('OTEL_EXPORTER_OTLP_ENDPOINT is set, but this version exports no traces: trace context is propagated and logged only');
    platform = await startPlatform({ ...config, runWorker: !nodeChildren, operator: nodeChildren ? undefined : operator, log, accessLog: log.requests, activityLog: log.activities });
  } catch (error) {
    if (error instanceof StartupError || error instanceof UnreadableSecretsError) log.error(`cannot start role ${role}: ${error.message}`);
    else log(`cannot start role ${role}`, error);
    process.exit(1);
  }

  if (nodeChildren) {
    // This process has migrated and seeded the database already.
    const childEnv = {
      DATABASE_URL: config.databaseUrl!,
      ...(config.tenantDatabaseUrl ? { TENANT_DATABASE_URL: config.tenantDatabaseUrl } : {}),
      PUBLIC_URL: publicUrl!,
      SVC_DEV_SEED: 'false',
      ...(temporal ? { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: temporal.namespace } : {}),
    };
    if (temporal) children.push(startNodeRole('worker', childEnv));
    if (operator) children.push(startNodeRole('operator', childEnv));
  }

  const temporalLine: Record<string, string> = temporal ? { Temporal: temporal.address } : {};
  const operatorLine: Record<string, string> =
    role === 'all' || role === 'operator' ? { operator: operator ? 'reconciling Tenant and App objects (kubeconfig found)' : 'off (no kubeconfig)' } : {};
  const metrics = `${platform.metricsUrl ?? platform.url}/metrics`;
  if (role === 'operator') {
    log.announce('operator running', { ...operatorLine, health: `${platform.url}/health`, metrics });
  } else if (role === 'worker') {
    log.announce(`worker running on task queue ${temporal!.taskQueue}`, { ...temporalLine, health: `${platform.url}/health`, metrics });
  } else if (role === 'control-plane') {
    // A credential made here is shown once, so that a local edge can be pointed at it; a given one never is.
    const made = config.controlPlaneToken ? '' : ` CONTROL_PLANE_TOKEN=${platform.controlPlaneToken}`;
    log.announce(`control plane (tRPC) listening on ${platform.url}; point the edge at it with CONTROL_PLANE_URL=${platform.url}${made}`, { metrics });
  } else {
    // `npm run token` asks http://localhost:8080 unless SVC_URL names another issuer.
    const tokenCommand = `${publicUrl === 'http://localhost:8080' ? '' : `SVC_URL=${publicUrl} `}npm run -s token -- admin@acme.test`;
    // What to do next first, then where everything is; the time counts from the process's start.
    log.announce(`platform ready on ${platform.url} (started in ${process.uptime().toFixed(1)} s)`, {
      'get a token': `TOKEN=$(${tokenCommand})`,
      'try it': `curl -H "Authorization: Bearer $TOKEN" ${platform.url}/api/svc/v3/users/me`,
      'API reference': `${platform.url}/docs (v3; ?api=v4 for v4)`,
      ...(local.temporalUiUrl ? { 'Temporal UI': local.temporalUiUrl } : {}),
      metrics,
      health: `${platform.url}/health`,
      'REST v3': `${platform.url}/api/svc/v3`,
      'sign-in': `${platform.url}/.well-known/openid-configuration${config.identity ? ' (external provider in use)' : ''}`,
      ...temporalLine,
      ...operatorLine,
    });
  }

  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop(0));

}

/** True when this file is the program (`node --import tsx main.ts`, `bun main.ts`), not imported. */
const isProgram = (import.meta as { main?: boolean }).main ?? (process.argv[1] !== undefined && resolve(process.argv[1]) === MAIN_SCRIPT);
if (isProgram) await runMain(process.argv.slice(2), process.env);
