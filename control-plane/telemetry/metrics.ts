import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's one metrics registry and every metric the platform records, all named `svc_*`.
 * Each role serves it as `GET /metrics` (Prometheus text format); docs/decisions/0109-metrics.md.
 */
export const registry = new Registry();

try {
  collectDefaultMetrics({ register: registry, prefix: 'svc_' });
} catch {
  // A runtime without some of Node's performance hooks (Bun) still serves the platform's own metrics.
}

/** Latencies from 1 ms to 10 s: an API call, a procedure, a reconcile. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const httpRequests = new Counter({
  name: 'svc_http_requests_total',
  help: 'Edge responses, by method, route template and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpRequestDuration = new Histogram({
  name: 'svc_http_request_duration_seconds',
  help: 'Time from a request reaching the edge to its response head, by method, route template and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: BUCKETS,
  registers: [registry],
});

export const rateLimitRefusals = new Counter({
  name: 'svc_rate_limit_refusals_total',
  help: 'Requests refused with 429 because their budget was spent, by budget group.',
  labelNames: ['group'] as const,
  registers: [registry],
});

export const procedureDuration = new Histogram({
  name: 'svc_trpc_procedure_duration_seconds',
  help: 'Control-plane procedure calls (tRPC), by procedure path and outcome (ok, or the error code).',
  labelNames: ['procedure', 'outcome'] as const,
  buckets: BUCKETS,
  registers: [registry],
});

export const workflowStarts = new Counter({
  name: 'svc_workflow_starts_total',
  help: 'Workflow starts asked of Temporal, by workflow type and outcome (started, already_started, failed).',
  labelNames: ['workflow', 'outcome'] as const,
  registers: [registry],
});

export const reconcileDuration = new Histogram({
  name: 'svc_operator_reconcile_duration_seconds',
  help: 'Operator reconciles, by kind (tenants, apps) and outcome (done, requeued, failed).',
  labelNames: ['kind', 'outcome'] as const,
  buckets: [...BUCKETS, 30, 60],
  registers: [registry],
});

export const tenantCondition = new Gauge({
  name: 'svc_operator_tenant_condition',
  help: "1 for the status each Tenant object's condition has (True, False or Unknown), 0 for the others; kept by the leading operator only.",
  labelNames: ['name', 'type', 'status'] as const,
  registers: [registry],
});

export const dbPoolMax = new Gauge({
  name: 'svc_db_pool_max_connections',
  help: 'Connections each PostgreSQL pool may open (system: owner role; intake: owner role, for inbound webhook deliveries; tenant: row-level-security transactions; read: shared tenant reads; write: shared one-statement tenant writes).',
  labelNames: ['pool'] as const,
  registers: [registry],
});

export const dbTransactions = new Counter({
  name: 'svc_db_transactions_total',
  help: 'Transactions (system, intake, tenant) and pipelined reads (read) and writes (write) given to each PostgreSQL pool.',
  labelNames: ['pool'] as const,
  registers: [registry],
});

export const dbInFlight = new Gauge({
  name: 'svc_db_in_flight',
  help: 'Transactions (system, tenant) and pipelined reads (read) and writes (write) running or waiting for a connection, per pool.',
  labelNames: ['pool'] as const,
  registers: [registry],
});

type Child = { observe(value: number): void };
const procedureChildren = new Map<string, Child>();
const httpChildren = new Map<string, { duration: Child; count: { inc(): void } }>();

/** Records a procedure call; label children are kept per procedure and outcome (hashing labels on every call costs more). */
export function observeProcedure(procedure: string, outcome: string, seconds: number): void {
  const key = `${procedure} ${outcome}`;
  let child = procedureChildren.get(key);
  if (!child) procedureChildren.set(key, (child = procedureDuration.labels(procedure, outcome)));
  child.observe(seconds);
}

/** Records an edge response by method, route template and status. */
export function observeHttp(method: string, route: string, status: number, seconds: number): void {
  const key = `${method} ${route} ${status}`;
  let child = httpChildren.get(key);
  if (!child) {
    const labels = [method, route, String(status)] as const;
    httpChildren.set(key, (child = { duration: httpRequestDuration.labels(...labels), count: httpRequests.labels(...labels) }));
  }
  child.duration.observe(seconds);
  child.count.inc();
}

const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;
/** The condition types last recorded per Tenant object, to remove those it no longer has. */
const tenantConditionTypes = new Map<string, string[]>();

/** Sets a Tenant object's condition gauges to its current conditions; `undefined` (the object is gone) removes them. */
export function recordTenantConditions(name: string, conditions: ReadonlyArray<{ type: string; status: string }> | undefined): void {
  for (const type of tenantConditionTypes.get(name) ?? []) for (const status of CONDITION_STATUSES) tenantCondition.remove({ name, type, status });
  if (!conditions) return void tenantConditionTypes.delete(name);
  for (const { type, status } of conditions) for (const s of CONDITION_STATUSES) tenantCondition.set({ name, type, status: s }, s === status ? 1 : 0);
  tenantConditionTypes.set(name, conditions.map((c) => c.type));
}

/** Forgets every Tenant condition: an operator that stops leading no longer knows them. */
export function clearTenantConditions(): void {
  tenantCondition.reset();
  tenantConditionTypes.clear();
}

/** The registry's text exposition and its content type. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}
