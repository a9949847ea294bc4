import { indexSpecs, statisticsName, type IndexSpec, type SkippedField } from '../indexes.ts';
import {
  appRole,
  countExpressionClaims,
  countIndexClaims,
  deleteIndexClaim,
  hasStatistics,
  insertIndexClaim,
  listIndexClaims,
  mayCancelStatementsOf,
  physicalIndexes,
  tableIsolation,
  tenantLogin,
  textAccessorLeakproof,
  visibleObjectTypes,
  withIndexLock,
  type IndexClaim,
} from '../storage.repo.ts';
import type { IndexBuilds } from '../index-builds.ts';
import type { DoctorCheck, StorageChange } from '../storage.schema.ts';
import { fail, isolationCheck, isolationProblems, ok, remembered, StorageUnavailableError, warn, type BackendDeps, type BackendDriver } from './backend.ts';

/** Tables that other backends own; the postgresql backend covers every other tenant-scoped table. */
export const BACKEND_TABLES = ['docstore_collections', 'docstore_documents', 'search_projections'] as const;

const LEAKPROOF_HINT =
  'a superuser can let filters on text fields use their indexes: ALTER FUNCTION pg_catalog.jsonb_extract_path_text(jsonb, text[]) LEAKPROOF (it raises no errors and has no side effects); number and boolean fields use theirs for sorts only';
const SYNC_HINT = 'POST /v4/data/resources/{tenantId}/storage/sync-schema (svc resources sync-schema)';

export interface IndexPlan {
  changes: StorageChange[];
  skipped: SkippedField[];
  creates: IndexSpec[];
  drops: IndexClaim[];
}

/**
 * The expression indexes on `resources` that the tenant's object types ask for (`indexes`, `x-indexed`),
 * compared with the tenant's claims and the catalog: a missing claim, a missing index or an
 * invalid one (a failed concurrent build) is a `create`; a claim no type asks for is a `drop`.
 */
export async function planIndexes(deps: BackendDeps, tenantId: string): Promise<IndexPlan> {
  const { types, claims } = await deps.db.inTenant(tenantId, async (tx) => ({ types: await visibleObjectTypes(tx), claims: await listIndexClaims(tx) }));
  const { specs, skipped } = indexSpecs(tenantId, types);
  const byField = <T extends { objectType: string; field: string }>(a: T, b: T) =>
    a.objectType === b.objectType ? (a.field < b.field ? -1 : a.field > b.field ? 1 : 0) : a.objectType < b.objectType ? -1 : 1;
  const wanted = new Map(specs.sort(byField).map((spec) => [spec.name, spec]));
  const claimed = new Set(claims.map((c) => c.indexName));
  const physical = await deps.db.system((tx) => physicalIndexes(tx, [...new Set([...wanted.keys(), ...claimed])]));
  const creates: IndexSpec[] = [];
  const changes: StorageChange[] = [];
  for (const spec of wanted.values()) {
    const index = physical.get(spec.name);
    if (claimed.has(spec.name) && index?.valid) continue;
    const why = !claimed.has(spec.name) ? '' : !index ? ' (the index is missing)' : ' (the index is invalid: an interrupted build)';
    creates.push(spec);
    changes.push({
      backend: 'postgresql',
      action: 'create',
      object: 'index',
      name: spec.name,
      objectType: spec.objectType,
      field: spec.field,
      description: `index resources of type ${spec.objectType} on ${spec.field}${why}`,
    });
  }
  const drops = claims.filter((c) => !wanted.has(c.indexName)).sort(byField);
  for (const claim of drops) {
    changes.push({
      backend: 'postgresql',
      action: 'drop',
      object: 'index',
      name: claim.indexName,
      objectType: claim.objectType,
      field: claim.field,
      description: `${claim.objectType}.${claim.field} is no longer declared in indexes or marked x-indexed`,
    });
  }
  return { changes, skipped, creates, drops };
}

/**
 * Applies an index plan. Each index is built with `create index concurrently` (writes to
 * resources go on meanwhile) under a lock per index; the tenant's claim is written first, and an
 * index is dropped only with its last claim, so tenants sharing an index never lose it to another.
 * With `unlessBusy`, an index whose lock another connection holds is left to that holder.
 */
export async function applyIndexes(deps: BackendDeps, tenantId: string, plan: IndexPlan, signal?: AbortSignal, options: { unlessBusy?: boolean } = {}): Promise<void> {
  const maintenance = deps.db.maintenanceSql;
  // A plan may be stale by the time its index's lock is held: another process may have built the
  // index meanwhile, or the type stopped declaring it. Each change is checked against a fresh plan
  // under its lock, so a late build neither repeats work nor brings back an index just dropped.
  const stillPlanned = async (name: string, kind: 'creates' | 'drops') => {
    const fresh = await planIndexes(deps, tenantId);
    return kind === 'creates' ? fresh.creates.some((spec) => spec.name === name) : fresh.drops.some((claim) => claim.indexName === name);
  };
  let newStatistics = false;
  for (const spec of plan.creates) {
    const ran = await withIndexLock(maintenance, spec.name, async (connection) => {
      if (!(await stillPlanned(spec.name, 'creates'))) return;
      await deps.db.inTenant(tenantId, (tx) => insertIndexClaim(tx, spec));
      const existing = (await physicalIndexes(connection, [spec.name])).get(spec.name);
      if (existing && !existing.valid) await connection.unsafe(`drop index concurrently if exists ${spec.name}`);
      await connection.unsafe(spec.definition);
    }, signal, options);
    const { statistics } = spec;
    if (!ran || !statistics) continue;
    // Under a lock of their own: another tenant's last claim of the expression may be dropping them.
    await withIndexLock(maintenance, statistics.name, async (connection) => {
      if (await hasStatistics(connection, statistics.name)) return;
      await connection.unsafe(statistics.definition);
      newStatistics = true;
    }, signal, options);
  }
  // New statistics are empty until the table is analysed; a sample of it, so quick whatever its size.
  if (newStatistics) await maintenance.unsafe('analyze resources');
  for (const claim of plan.drops) {
    const ran = await withIndexLock(maintenance, claim.indexName, async (connection) => {
      if (!(await stillPlanned(claim.indexName, 'drops'))) return;
      await deps.db.inTenant(tenantId, (tx) => deleteIndexClaim(tx, claim.indexName));
      if ((await countIndexClaims(connection, claim.indexName)) === 0) {
        await connection.unsafe(`drop index concurrently if exists ${claim.indexName}`);
      }
    }, signal, options);
    if (!ran) continue;
    // The expression's statistics go with the last claim, of any tenant, that indexes it.
    const statistics = statisticsName(claim.expression);
    await withIndexLock(maintenance, statistics, async (connection) => {
      if ((await countExpressionClaims(connection, claim.expression)) === 0) await connection.unsafe(`drop statistics if exists ${statistics}`);
    }, signal, options);
  }
}

/** The tenant's tables in PostgreSQL, isolated by row-level security, and the indexes its object types declare. */
export function createPostgresqlBackend(deps: BackendDeps, indexBuilds?: IndexBuilds): BackendDriver {
  async function tenantTables() {
    const tables = await deps.db.system((tx) => tableIsolation(tx));
    return tables.filter((t) => !(BACKEND_TABLES as readonly string[]).includes(t.table));
  }

  async function roleProblem(): Promise<string | undefined> {
    const role = await deps.db.system((tx) => appRole(tx));
    if (!role.exists) return 'role svc_app does not exist';
    if (role.superuser || role.bypassRls) return 'role svc_app bypasses row-level security';
    return undefined;
  }

  /** What stands in the way of provisioning on these tables, from memory while there is nothing (the doctor reads afresh). */
  const isolation = remembered(
    async () => {
      const tables = await tenantTables();
      return { tables, problems: [...isolationProblems(tables), ...[await roleProblem()].filter((p): p is string => p !== undefined)] };
    },
    ({ problems }) => problems.length === 0,
  );

  return {
    backend: 'postgresql',

    async location() {
      const { database, schema } = await deps.database();
      return { store: 'postgresql', database, schema, objects: (await isolation()).tables.map((t) => t.table), isolation: 'row-level-security' };
    },

    async reconcile(tenantId, { apply, signal }) {
      const { problems } = await isolation();
      if (problems.length) {
        throw new StorageUnavailableError(`tenant isolation in PostgreSQL is broken: ${problems.join('; ')}`, 'restore the migrations’ row-level security, policies and roles');
      }
      const plan = await planIndexes(deps, tenantId);
      if (apply) await applyIndexes(deps, tenantId, plan, signal);
      return plan.changes;
    },

    async checks(tenantId) {
      const checks: DoctorCheck[] = [isolationCheck('postgresql', await tenantTables())];
      const problem = await roleProblem();
      checks.push(
        problem
          ? fail('postgresql', 'app-role', problem, 'recreate svc_app as in control-plane/db/migrations/0001_foundation.sql (nologin nobypassrls)')
          : ok('postgresql', 'app-role', 'tenant transactions run as svc_app, which row-level security applies to'),
      );
      const login = await deps.db.inTenant(tenantId, (tx) => tenantLogin(tx));
      const ownerCanCancel = await deps.db.system((tx) => mayCancelStatementsOf(tx, login.role));
      checks.push(
        login.canLeaveRls
          ? warn('postgresql', 'tenant-login', `tenant connections log in as ${login.role}, which is or can become the tables' owner, a superuser or a role that bypasses row-level security: a statement that sets its role could leave row-level security`, 'set TENANT_DATABASE_URL to a login that is a member of svc_app only (docs/decisions.md)')
          : !ownerCanCancel
            ? warn('postgresql', 'tenant-login', `the tables' owner cannot cancel the statements of ${login.role}: a cancelled request's statement runs on`, `grant ${login.role} to the owner (DATABASE_URL's role)`)
            : ok('postgresql', 'tenant-login', `tenant connections log in as ${login.role}, which cannot leave row-level security`),
      );
      const plan = await planIndexes(deps, tenantId);
      const claims = await deps.db.inTenant(tenantId, (tx) => listIndexClaims(tx));
      const build = plan.changes[0]?.objectType ? (await indexBuilds?.statuses(tenantId))?.(plan.changes[0].objectType) : undefined;
      const pending = plan.changes.map((c) => `${c.action} ${c.objectType}.${c.field}`).join(', ');
      if (plan.changes.length && build?.state === 'building') {
        checks.push(warn('postgresql', 'indexes', `building ${plan.changes.length} index change(s) in the background: ${pending}`, 'wait: writes go on meanwhile; GET the object type for its indexBuild'));
      } else if (plan.changes.length) {
        const why = build?.error ? ` (the last build failed: ${build.error})` : '';
        checks.push(warn('postgresql', 'indexes', `${plan.changes.length} index change(s) pending${why}: ${pending}`, SYNC_HINT));
      } else {
        checks.push(ok('postgresql', 'indexes', `${claims.length} index(es) declared by object types are in place`));
      }
      const textFields = claims.filter((c) => c.expression.startsWith('(data #>> '));
      if (textFields.length) {
        checks.push(
          (await deps.db.system((tx) => textAccessorLeakproof(tx)))
            ? ok('postgresql', 'index-filters', `filters on ${textFields.length} indexed text field(s) can use their indexes under row-level security`)
            : warn(
                'postgresql',
                'index-filters',
                `indexes on ${textFields.map((c) => `${c.objectType}.${c.field}`).join(', ')} serve sorts only: under row-level security PostgreSQL applies filters after the tenant policy, because jsonb_extract_path_text (#>>) is not LEAKPROOF`,
                LEAKPROOF_HINT,
              ),
        );
      }
      if (plan.skipped.length) {
        checks.push(warn('postgresql', 'indexed-fields', plan.skipped.map((s) => `${s.objectType}.${s.field} ${s.reason}`).join('; '), 'change the object type’s schema, or remove these fields from its indexes (or their x-indexed)'));
      }
      return checks;
    },
  };
}
