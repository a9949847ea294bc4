import postgres, { type PendingQuery, type Row, type Sql } from 'postgres';
import { dbInFlight, dbPoolMax, dbTransactions } from '../telemetry/metrics.ts';
import { databaseUnavailable, DEFAULT_DB_TIMEOUTS, isConnectionLost, reconnectBackoff, connectionSocket, withinAcquireTimeout, type DbTimeouts } from './faults.ts';

/** A connection inside one transaction: what repos receive. */
export type Tx = Sql<Record<string, never>>;

export interface Db {
  /** The owner role's pool: platform work outside any tenant (identity, sessions). */
  readonly sql: Sql;
  /**
   * Runs `fn` in one transaction as the row-level-security role with the tenant set for that
   * transaction only: every policy then limits rows to this tenant, whatever the SQL says.
   * `BEGIN`, the tenant setting and `fn`'s first statement travel in one round trip.
   */
  inTenant<T>(tenantId: string, fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Runs the one read-only statement that `statement` returns (unsent) in its own read-only
   * transaction for the tenant, like `inTenant`, on a connection shared with other such reads:
   * `BEGIN`, the tenant setting, the statement and `COMMIT` are written together, behind and
   * ahead of other requests' reads, so many requests share each write and round trip. For short
   * point reads only: a slow one delays the reads queued behind it.
   */
  readInTenant<T extends readonly Row[]>(tenantId: string, statement: (tx: Tx) => PendingQuery<T>): Promise<T>;
  /**
   * `readInTenant` for a write that is one statement (its history entry included): `BEGIN`, the
   * tenant setting, the statement and `COMMIT` written together on a connection shared with other
   * such writes, so that many requests share each socket write. Each transaction on a connection
   * commits after the one before it; PostgreSQL's group commit flushes the connections' commits
   * together. A write that waits for a lock longer than SHARED_WRITE_LOCK_TIMEOUT fails
   * (`isLockNotAvailable`), so that it cannot hold up the writes behind it for long.
   */
  writeInTenant<T extends readonly Row[]>(tenantId: string, statement: (tx: Tx) => PendingQuery<T>): Promise<T>;
  /** Runs `fn` in one transaction as the owner role: for identity resolution and platform work only. */
  system<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * `system` on a small owner pool of its own, for the work of callers that present no token
   * (inbound webhook deliveries): a flood of them waits for these connections only, never for
   * those that sign-in, sessions and authenticated requests need.
   */
  intake<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * A small owner pool for maintenance statements that may rightly run long: building and
   * dropping indexes concurrently, `analyze`. They wait for other work on the table (another
   * build, older transactions) before they start, so no statement timeout applies here, and the
   * connection is not cut for a long silence; TCP keepalive notices a lost server.
   */
  readonly maintenanceSql: Sql;
  close(): Promise<void>;
}

/**
 * Runs `fn`, whose statements run on `connection`, and cancels the statement running there when
 * `signal` aborts (it then fails with `query_canceled`). The cancel travels on an owner
 * connection; one in flight is awaited before this returns, so it can never reach a statement
 * that the connection runs for someone else afterwards.
 */
export async function cancellingOnAbort<T>(owner: Sql, connection: Tx | Sql, signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
  if (!signal) return fn();
  signal.throwIfAborted();
  const [{ pid }] = await (connection as Sql)<[{ pid: number }]>`select pg_backend_pid() as pid`;
  let cancelling: Promise<unknown> | undefined;
  const cancel = () => {
    cancelling = owner`select pg_cancel_backend(${pid})`.catch(() => undefined);
  };
  signal.addEventListener('abort', cancel, { once: true });
  try {
    signal.throwIfAborted();
    return await fn();
  } finally {
    signal.removeEventListener('abort', cancel);
    await cancelling;
  }
}

/** The role that every tenant-scoped transaction assumes; created by the first migration. */
export const APP_ROLE = 'svc_app';

/** Statements of a tenant transaction that may still be in flight when it commits (see `afterStatements`). */
const inFlightAtCommit = new WeakMap<object, Array<Promise<unknown>>>();

/**
 * Lets `statements`, already sent on `tx`, travel with the commit instead of before it: in an
 * `inTenant` transaction the commit is sent behind them, one round trip for both, and should any
 * of them fail the transaction is rolled back and that failure is what the caller gets. In any
 * other transaction they are simply awaited here.
 */
export async function afterStatements(tx: Tx, statements: Promise<unknown>): Promise<void> {
  const pending = inFlightAtCommit.get(tx);
  if (!pending) return void (await statements);
  statements.catch(() => {});
  pending.push(statements);
}

/**
 * Sets the tenant for the current transaction only (`is_local`): COMMIT or ROLLBACK clears it, so
 * a pooled connection never carries one request's tenant into the next. The statement also assumes
 * `svc_app` for the transaction, which the tenant connections already run as from their start: a
 * connection pooler that drops startup parameters then still cannot turn row-level security off,
 * at no cost in statements or round trips. Parameters: the tenant id, `APP_ROLE`.
 */
export const SET_TENANT_SQL = `select set_config('svc.tenant_id', $1, true), set_config('role', $2, true)`;

/**
 * SET_TENANT_SQL for a write on a shared connection (`writeInTenant`), which also bounds how long
 * it waits for a lock (`lock_timeout`, the third parameter): a write waiting for a row would hold
 * up every write queued behind it on the connection, other tenants' too. It then fails with
 * `lock_not_available` (`isLockNotAvailable`), and the caller writes on a connection of its own.
 */
export const SET_TENANT_FOR_SHARED_WRITE_SQL = `select set_config('svc.tenant_id', $1, true), set_config('role', $2, true), set_config('lock_timeout', $3, true)`;

/** How long a shared write waits for a lock before it gives up. */
export const SHARED_WRITE_LOCK_TIMEOUT = '50ms';

/** Whether a statement failed because a lock was not granted in time (SQLSTATE 55P03). */
export const isLockNotAvailable = (error: unknown) => (error as { code?: unknown } | null)?.code === '55P03';

export interface DbOptions {
  /** Connections of the tenant pool that `inTenant` reserves, one per transaction. Default 20. */
  max?: number;
  /** Connections of the owner pool. Default 10. */
  systemMax?: number;
  /** Connections of the owner pool that `intake` uses (unauthenticated inbound work). Default 2. */
  intakeMax?: number;
  /** Connections that `readInTenant` pipelines reads on. Default 1: more reads share each write (docs/decisions/0120-shared-tenant-connections.md). */
  readConnections?: number;
  /** Connections that `writeInTenant` pipelines one-statement writes on. Default 4 (docs/decisions/0120-shared-tenant-connections.md). */
  writeConnections?: number;
  /**
   * The URL tenant connections log in with: a role that is a member of `svc_app` and owns nothing
   * (`TENANT_DATABASE_URL`). Without it they log in as `databaseUrl`'s role and assume `svc_app`,
   * which a statement could undo with `SET ROLE NONE` (docs/decisions/0039-tenant-login-role.md).
   */
  tenantDatabaseUrl?: string;
  /** Connect, idle, statement and acquire timeouts of every pool (db/faults.ts); default DEFAULT_DB_TIMEOUTS. */
  timeouts?: DbTimeouts;
}

/**
 * A postgres.js pool with the platform's connection settings. `role` is sent as a startup
 * parameter: every connection of the pool runs as that role from its start (it is also what
 * `RESET ROLE` returns to), and a connection that cannot assume it fails to open.
 */
export function createPool(databaseUrl: string, options: { max: number; role?: string; timeouts?: DbTimeouts; onclose?: (connectionId: number) => void }): Sql {
  const timeouts = options.timeouts ?? DEFAULT_DB_TIMEOUTS;
  return postgres(databaseUrl, {
    max: options.max,
    onnotice: () => {},
    ...(options.onclose ? { onclose: options.onclose } : {}),
    connect_timeout: timeouts.connectSeconds,
    idle_timeout: timeouts.idleSeconds,
    backoff: reconnectBackoff,
    // An option postgres.js takes but does not declare.
    ...({ socket: connectionSocket(timeouts.statementMs) } as object),
    connection: {
      application_name: 'svc-platform',
      TimeZone: 'UTC',
      statement_timeout: String(timeouts.statementMs),
      ...(options.role ? { role: options.role } : {}),
    } as Record<string, string>,
  });
}

/** The methods of a connection that make statements (the rest build fragments and values). */
const STATEMENT_METHODS = new Set<PropertyKey>(['unsafe', 'file', 'savepoint', 'begin', 'notify', 'listen', 'subscribe']);

/**
 * `connection` as a transaction's work sees it, until `end()`: a statement made after that is
 * refused. postgres.js sends a reserved connection's statements to whatever that connection is by
 * then: after it lost its server, work still running (awaiting something else) would write to its
 * closed socket, which crashes the process, or, once the pool opened it again for another
 * transaction, run inside that transaction with its tenant.
 */
function untilEnded(connection: postgres.ReservedSql | postgres.TransactionSql): { tx: Tx; end(): void } {
  let ended = false;
  const refuse = (): never => {
    throw Object.assign(new Error('the transaction already ended: its connection to PostgreSQL closed'), { code: 'CONNECTION_CLOSED' });
  };
  const tx = new Proxy(connection, {
    apply: (target, thisArg, args) => (ended ? refuse() : Reflect.apply(target, thisArg, args)),
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function' || !STATEMENT_METHODS.has(property)) return value;
      return (...args: unknown[]) => (ended ? refuse() : Reflect.apply(value, target, args));
    },
  });
  return {
    tx: tx as unknown as Tx,
    end: () => {
      ended = true;
    },
  };
}

/**
 * Runs `fn` as an `inTenant` transaction on a reserved tenant connection, then hands the connection
 * back (unless it lost its server). `closeWatchers` is where the pool's `onclose` finds who waits on it.
 */
async function inReserved<T>(connection: postgres.ReservedSql, closeWatchers: Map<number, () => void>, tenantId: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
  let lost = false;
  // postgres.js never settles statements queued on a reserved connection whose server went away:
  // the transaction then fails when the pool reports that connection closed.
  let connectionId: number | undefined;
  const work = untilEnded(connection);
  let died: () => void = () => {};
  const closed = new Promise<never>(
    (_, reject) =>
      (died = () => {
        work.end();
        reject(Object.assign(new Error('the connection to PostgreSQL closed during the transaction'), { code: 'CONNECTION_CLOSED' }));
      }),
  );
  closed.catch(() => {});
  const watched = <V>(work: Promise<V>) => Promise.race([work, closed]);
  try {
    // Sent without waiting: the connection pipelines them ahead of fn's statements. If either
    // fails, the transaction is aborted and every later statement fails with it.
    const onexecute = (c: { id: number }) => {
      connectionId = c.id;
      closeWatchers.set(c.id, died);
      return true;
    };
    const setup = Promise.all([connection.unsafe('begin', [], { onexecute } as never), connection.unsafe(SET_TENANT_SQL, [tenantId, APP_ROLE], { prepare: true })]);
    setup.catch(() => {});
    const pending: Array<Promise<unknown>> = [];
    inFlightAtCommit.set(work.tx, pending);
    try {
      const result = await watched(fn(work.tx));
      // Behind the statements still in flight (the setup's too): if one failed, the transaction
      // is aborted and this commit rolls it back, and that statement's failure is thrown below.
      const commit = connection.unsafe('commit');
      commit.catch(() => {});
      await watched(setup);
      await watched(Promise.all(pending));
      await watched(commit);
      return result;
    } catch (error) {
      const outcomes = isConnectionLost(error) ? [] : await Promise.race([Promise.allSettled([setup, ...pending]), closed.catch(() => [])]);
      // A connection that lost its server takes no rollback (the server ended the transaction),
      // and postgres.js must not be handed it back: writing to its closed socket would crash
      // the process. The pool already counts it as closed and opens it again when needed.
      lost = isConnectionLost(error) || !outcomes.length || outcomes.some((outcome) => outcome.status === 'rejected' && isConnectionLost(outcome.reason));
      if (!lost) await connection.unsafe('rollback').catch(() => {});
      throw error;
    }
  } finally {
    work.end();
    if (connectionId !== undefined && closeWatchers.get(connectionId) === died) closeWatchers.delete(connectionId);
    inFlightAtCommit.delete(work.tx);
    if (!lost) connection.release();
  }
}

/** How long a shared connection that lost its server is passed over, its work going to the tenant pool instead. */
const LANE_REST_MS = 1_000;
/** What a lane call fails with when its statements waited too long (never seen by callers). */
const LANE_STUCK = new Error('the shared connection did not answer in time');

/**
 * Pools over one database: the owner's; the tenant pool, whose connections run as `svc_app` from
 * their start, so row-level security applies to everything they run, inside a transaction or
 * not; and `svc_app` connections that `readInTenant` (one by default) and `writeInTenant` (four)
 * share between requests (each its own pool of one, so that statements run in the order sent).
 */
export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  const timeouts = options.timeouts ?? DEFAULT_DB_TIMEOUTS;
  const sql = createPool(databaseUrl, { max: options.systemMax ?? 10, timeouts });
  const intakeSql = createPool(databaseUrl, { max: options.intakeMax ?? 2, timeouts });
  const maintenanceSql = createPool(databaseUrl, { max: 2, timeouts: { ...timeouts, statementMs: 0 } });
  const tenantUrl = options.tenantDatabaseUrl ?? databaseUrl;
  // Who waits on each reserved tenant connection: told when it closes (see inReserved).
  const closeWatchers = new Map<number, () => void>();
  const tenantSql = createPool(tenantUrl, { max: options.max ?? 20, role: APP_ROLE, timeouts, onclose: (id) => closeWatchers.get(id)?.() });
  const lanesOf = (count: number) => Array.from({ length: Math.max(1, count) }, () => ({ sql: createPool(tenantUrl, { max: 1, role: APP_ROLE, timeouts }), inFlight: 0, restUntil: 0 }));
  const readLanes = lanesOf(options.readConnections ?? 1);
  const writeLanes = lanesOf(options.writeConnections ?? 4);
  // postgres.js tells nothing of its pools' state: what is counted is the work given to each.
  dbPoolMax.set({ pool: 'system' }, options.systemMax ?? 10);
  dbPoolMax.set({ pool: 'intake' }, options.intakeMax ?? 2);
  dbPoolMax.set({ pool: 'tenant' }, options.max ?? 20);
  dbPoolMax.set({ pool: 'read' }, readLanes.length);
  dbPoolMax.set({ pool: 'write' }, writeLanes.length);
  const pools = ['system', 'intake', 'tenant', 'read', 'write'] as const;
  const inFlight = Object.fromEntries(pools.map((pool) => [pool, dbInFlight.labels(pool)])) as Record<(typeof pools)[number], ReturnType<typeof dbInFlight.labels>>;
  const begun = Object.fromEntries(pools.map((pool) => [pool, dbTransactions.labels(pool)])) as Record<(typeof pools)[number], ReturnType<typeof dbTransactions.labels>>;

  async function inTenant<T>(tenantId: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
    inFlight.tenant.inc();
    begun.tenant.inc();
    try {
      return await withinAcquireTimeout(timeouts.acquireMs, async (claim) => {
        const connection = await tenantSql.reserve();
        if (!claim()) return void connection.release() as never;
        return inReserved(connection, closeWatchers, tenantId, fn);
      });
    } finally {
      inFlight.tenant.dec();
    }
  }

  /**
   * Runs `statement` in its own transaction on the least busy of the shared connections for reads
   * or writes: `begin`, the tenant setting, the statement and `COMMIT`, queued together on it.
   */
  async function onLane<T extends readonly Row[]>(kind: 'read' | 'write', tenantId: string, statement: (tx: Tx) => PendingQuery<T>): Promise<T> {
    const lanes = kind === 'read' ? readLanes : writeLanes;
    const counted = inFlight[kind];
    const now = Date.now();
    const usable = lanes.filter((candidate) => candidate.restUntil <= now);
    // No shared connection is a single point of failure: while each has lost its server lately,
    // the statement runs in a transaction of its own on the tenant pool, like `inTenant`.
    if (!usable.length) return inTenant(tenantId, (own) => statement(own));
    const lane = usable.reduce((least, candidate) => (candidate.inFlight < least.inFlight ? candidate : least));
    const tx = lane.sql as unknown as Tx;
    const queries = [
      tx.unsafe(kind === 'read' ? 'begin read only' : 'begin'),
      kind === 'read'
        ? tx.unsafe(SET_TENANT_SQL, [tenantId, APP_ROLE], { prepare: true })
        : tx.unsafe(SET_TENANT_FOR_SHARED_WRITE_SQL, [tenantId, APP_ROLE, SHARED_WRITE_LOCK_TIMEOUT], { prepare: true }),
      statement(tx),
      tx.unsafe('commit'),
    ] as const;
    const [, , run, commit] = queries;
    // Queued in this order on the lane's one connection, so no other request's statement can
    // come between them. A failed BEGIN or tenant setting fails the statement (or leaves it
    // without a tenant, which no policy matches), and COMMIT then rolls back.
    const answered: unknown[] = [];
    for (const query of queries) query.execute().then(() => answered.push(query), () => answered.push(query));
    lane.inFlight++;
    counted.inc();
    begun[kind].inc();
    // Statements queued on a lane whose connection is being opened again wait for it: a request
    // waits no longer than for a connection of a pool, and the lane rests meanwhile.
    const all = Promise.all(queries);
    all.catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(LANE_STUCK), timeouts.acquireMs)));
    try {
      const [, , rows] = await Promise.race([all, stuck]);
      // postgres.js re-sends a statement whose prepared form the server dropped (a schema change)
      // at the end of the connection's queue: its answer then comes from outside this transaction,
      // where no tenant is set, so that row-level security shows it no tenant's rows.
      if (answered.indexOf(run) > answered.indexOf(commit)) throw new Error('a tenant statement was re-sent outside its transaction');
      return rows;
    } catch (error) {
      if (error === LANE_STUCK) {
        lane.restUntil = Date.now() + LANE_REST_MS;
        throw databaseUnavailable();
      }
      await Promise.allSettled(queries);
      if (isConnectionLost(error)) lane.restUntil = Date.now() + LANE_REST_MS;
      throw error;
    } finally {
      clearTimeout(timer);
      lane.inFlight--;
      counted.dec();
    }
  }

  async function ownerTransaction<T>(pool: 'system' | 'intake', owner: Sql, fn: (tx: Tx) => Promise<T>): Promise<T> {
    inFlight[pool].inc();
    begun[pool].inc();
    try {
      // A transaction that gets its connection after its caller was refused is rolled back unrun.
      return await withinAcquireTimeout(timeouts.acquireMs, async (claim) => {
        let work: ReturnType<typeof untilEnded> | undefined;
        try {
          return (await owner.begin((tx) => {
            if (!claim()) throw databaseUnavailable();
            work = untilEnded(tx);
            return fn(work.tx);
          })) as T;
        } finally {
          work?.end();
        }
      });
    } finally {
      inFlight[pool].dec();
    }
  }

  return {
    sql,
    maintenanceSql,
    inTenant,
    readInTenant: (tenantId, statement) => onLane('read', tenantId, statement),
    writeInTenant: (tenantId, statement) => onLane('write', tenantId, statement),
    system: (fn) => ownerTransaction('system', sql, fn),
    intake: (fn) => ownerTransaction('intake', intakeSql, fn),
    close: async () => {
      await Promise.all([sql, intakeSql, maintenanceSql, tenantSql, ...[...readLanes, ...writeLanes].map((lane) => lane.sql)].map((pool) => pool.end({ timeout: 5 })));
    },
  };
}
