import { Socket } from 'node:net';
import { ServiceUnavailableError } from '../errors.ts';

/**
 * How the platform's connections to PostgreSQL bound their waits (docs/behaviour.md, "Database
 * faults"). Every pool gets them: a request never waits on the database longer than these allow.
 */
export interface DbTimeouts {
  /** How long opening a connection may take (`DB_CONNECT_TIMEOUT_SECONDS`, postgres.js `connect_timeout`). */
  connectSeconds: number;
  /** An idle connection is closed after this long (`DB_IDLE_TIMEOUT_SECONDS`, postgres.js `idle_timeout`), so a dead one is not kept. */
  idleSeconds: number;
  /** The server cancels a statement running longer (`DB_STATEMENT_TIMEOUT_MS`, PostgreSQL's `statement_timeout`); 0 turns it off. */
  statementMs: number;
  /** How long a transaction may wait for a free connection of its pool (`DB_ACQUIRE_TIMEOUT_MS`) before it is refused with 503. */
  acquireMs: number;
}

export const DEFAULT_DB_TIMEOUTS: DbTimeouts = { connectSeconds: 5, idleSeconds: 60, statementMs: 30_000, acquireMs: 5_000 };

/**
 * postgres.js waits this long before opening a connection again after a failed attempt (its
 * default grows to 20 s, so that a request queued during an outage waited that long after the
 * database was back). Seconds, at most one.
 */
export const reconnectBackoff = (retries: number) => Math.min(0.05 * 2 ** retries, 1);

/** How much longer than `statement_timeout` an answer may take to come back before its connection is cut. */
export const ANSWER_MARGIN_MS = 2_000;

/**
 * The socket of each connection the platform opens (postgres.js's `socket` option). It works
 * around two ways a connection goes bad:
 *
 * - With `statementMs` > 0, it is cut (`ETIMEDOUT`) when it sent something and heard nothing for
 *   `statementMs` + {@link ANSWER_MARGIN_MS}: the server answers every statement within its
 *   `statement_timeout`, with rows or a cancellation, so such a silence means the network path is
 *   gone (a blackhole, a partition: TCP itself notices only after minutes). Its statements then
 *   fail as a lost connection (503), and the pool opens a new one. An idle or listening
 *   connection, which sent nothing since its last answer, is never cut (on a TLS connection only
 *   the plain-text start is watched).
 * - A socket that postgres.js wrote nothing to in the event-loop turn that opened it is destroyed
 *   at once. postgres.js (3.4.9) writes a connection's start in that turn, unless the connection
 *   is stuck: a statement sent on it just as its server closed it (a backend terminated: the
 *   goodbye read, the socket's `close` not yet handled) is buffered for a write one immediate
 *   later, and when the `close` is handled first, postgres.js cancels that write but keeps the
 *   buffer and the cancelled write's handle. Each later start of the connection is then appended
 *   to the buffer and never written: it times out opening every `DB_CONNECT_TIMEOUT_SECONDS`,
 *   without end, its pool one connection short for good. Destroyed at once, the next start comes
 *   at once; past 1 KiB postgres.js writes the buffer, the server refuses it as a malformed start
 *   (no session exists, so none of it runs), and the connection's next start is clean
 *   (docs/decisions/0179-connections-stuck-after-a-drop.md).
 */
export function connectionSocket(statementMs: number) {
  const deadlineMs = statementMs + ANSWER_MARGIN_MS;
  return (options: { host: string[]; port: number[]; path?: string | false; sslnegotiation?: string | null }): Socket => {
    const socket = new Socket();
    // Connecting resets `write` to the prototype's: it is wrapped after.
    if (options.path) socket.connect(options.path);
    else socket.connect(options.port[0]!, options.host[0]!);
    let timer: NodeJS.Timeout | undefined;
    let written = false;
    const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
    socket.write = ((...args: unknown[]) => {
      written = true;
      if (statementMs > 0) timer ??= setTimeout(() => socket.destroy(Object.assign(new Error(`PostgreSQL did not answer within ${deadlineMs} ms`), { code: 'ETIMEDOUT' })), deadlineMs).unref();
      return write(...args);
    });
    // postgres.js writes the start (or the TLS request) from an immediate queued behind this one;
    // a direct TLS start is written by Node's TLS layer instead, in its own time.
    if (options.sslnegotiation !== 'direct') setImmediate(() => setImmediate(() => written || socket.destroy()));
    const answered = () => {
      clearTimeout(timer);
      timer = undefined;
    };
    socket.on('data', answered);
    socket.on('close', answered);
    return socket;
  };
}

/** The `Retry-After` (seconds) of an answer refused because the database is away. */
export const DATABASE_RETRY_AFTER_SECONDS = 1;

/** Failures of the connection itself (postgres.js codes and Node socket errors). */
const CONNECTION_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED', 'CONNECT_TIMEOUT', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** SQLSTATEs of a server that is shutting down, starting, crashed or full (57P01-57P03, 53300). */
const SERVER_GONE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

const codeOf = (error: unknown) => (error as { code?: unknown } | null)?.code;

/**
 * Whether `error` says the connection to PostgreSQL is gone or never came: nothing more can be
 * sent on it (a rollback neither), and the transaction's outcome is PostgreSQL's to tell.
 */
export function isConnectionLost(error: unknown): boolean {
  const code = codeOf(error);
  return typeof code === 'string' && (CONNECTION_CODES.has(code) || SERVER_GONE_STATES.has(code) || code.startsWith('08'));
}

/** Whether `error` means the database could not answer now (gone, starting, full, or a statement over `statement_timeout`), and the request may be retried. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (cause instanceof ServiceUnavailableError || isConnectionLost(cause) || codeOf(cause) === '57014') return true;
  }
  return false;
}

export const databaseUnavailable = () => new ServiceUnavailableError('the database is unavailable for a moment: retry shortly', DATABASE_RETRY_AFTER_SECONDS);

/**
 * Runs `start`, which waits for a connection and then does its work, refusing with 503 when no
 * connection came within `ms`. `start` receives `claim`: called once a connection is held, it
 * says whether the work may still go on (false when the caller was already refused: the
 * connection is then given back unused).
 */
export function withinAcquireTimeout<T>(ms: number, start: (claim: () => boolean) => Promise<T>): Promise<T> {
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  const refused = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      reject(new ServiceUnavailableError(`no database connection became free within ${ms} ms: retry shortly`, DATABASE_RETRY_AFTER_SECONDS));
    }, ms);
  });
  const claim = () => {
    if (settled) return false;
    settled = true;
    clearTimeout(timer);
    return true;
  };
  const work = start(claim).finally(() => clearTimeout(timer));
  // Once refused, the late outcome of `start` (its connection given back) concerns nobody.
  work.catch(() => {});
  return Promise.race([work, refused]);
}
