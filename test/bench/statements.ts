import { open, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Sql } from 'postgres';
import { postgresLimiters } from '../../api-edge/plugins/rate-limit-postgres.ts';
import { buildListStatements, type ListOptions } from '../../control-plane/resources/list-statements.ts';
import { APP_ROLE, SET_TENANT_SQL } from '../../control-plane/db/client.ts';
import { FIND_OBJECT_TYPE_SQL } from '../../control-plane/object-types/object-types.repo.ts';
import { CHANGED_SINCE_SQL, GET_RESOURCE_SQL } from '../../control-plane/resources/resources.repo.ts';
import { withSql } from './bench-db.ts';

/** One statement as sent to PostgreSQL, with its parameters as text. */
export interface Statement {
  sql: string;
  params: Array<string | null>;
}

/** The application name of the platform's connections (control-plane/db/client.ts). */
export const PLATFORM_APP = 'svc-platform';
const PREFIX = 'svc-bench-capture';
const ENTRY = new RegExp(`^${PREFIX} pid=\\d+ app=(\\S*) ([A-Z]+):  (.*)$`);
const PARAM = /\$(\d+) = (NULL|'((?:[^']|'')*)')/g;

/**
 * The lookup of array types postgres.js sends once on each new connection, before its first
 * statement: part of opening a connection, not of the request that happened to open it.
 */
const CONNECTION_SETUP = /^select\s+b\.oid,\s+b\.typarray\s+from\s+pg_catalog\.pg_type\s+a\b/;

/**
 * Runs `send` (one HTTP request) with `log_statement = 'all'` switched on for the cluster, and
 * returns every statement the platform's connections executed meanwhile for the request, in
 * order, with their bound parameters (a connection's own setup left out). The settings are reset
 * afterwards, whatever happens.
 */
export async function captureFromServerLog(adminUrl: string, logFile: string, send: () => Promise<void>): Promise<Statement[]> {
  const offset = (await stat(logFile)).size;
  await withSql(adminUrl, async (sql) => {
    try {
      await sql.unsafe(`alter system set log_statement = 'all'`);
      await sql.unsafe(`alter system set log_line_prefix = '${PREFIX} pid=%p app=%a '`);
      await sql`select pg_reload_conf()`;
      await sleep(500);
      await send();
      await sleep(300);
    } finally {
      await sql.unsafe('alter system reset log_statement');
      await sql.unsafe('alter system reset log_line_prefix');
      await sql`select pg_reload_conf()`;
    }
  });
  return parseStatementLog(await readFrom(logFile, offset)).filter((statement) => !CONNECTION_SETUP.test(statement.sql.trim()));
}

async function readFrom(file: string, offset: number): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const buffer = Buffer.alloc(size - offset);
    await handle.read(buffer, 0, buffer.length, offset);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}

/** Extracts the platform's statements from stderr-format log text written with the capture prefix. */
export function parseStatementLog(text: string): Statement[] {
  const entries: Array<{ app: string; level: string; message: string }> = [];
  for (const line of text.split('\n')) {
    const match = ENTRY.exec(line);
    if (match) entries.push({ app: match[1]!, level: match[2]!, message: match[3]! });
    else if (line.startsWith('\t') && entries.length) entries[entries.length - 1]!.message += `\n${line.slice(1)}`;
  }
  const statements: Statement[] = [];
  for (const { app, level, message } of entries) {
    if (app !== PLATFORM_APP) continue;
    const logged = level === 'LOG' ? /^(?:execute [^:]*|statement): ?([\s\S]*)$/.exec(message) : null;
    if (logged) statements.push({ sql: logged[1]!, params: [] });
    const detail = level === 'DETAIL' ? /^parameters: ([\s\S]*)$/.exec(message) : null;
    if (detail && statements.length) statements[statements.length - 1]!.params = parseParams(detail[1]!);
  }
  return statements;
}

function parseParams(text: string): Array<string | null> {
  const params: Array<string | null> = [];
  for (const match of text.matchAll(PARAM)) {
    params[Number(match[1]) - 1] = match[2] === 'NULL' ? null : match[3]!.replaceAll("''", "'");
  }
  return params;
}

/** What the code says one request sends: the inputs needed to rebuild it without a server log. */
export interface RequestContext {
  tenantId: string;
  /** The edge's `rateLimits.keyPrefix` and the key it limits a tenant's requests by. */
  rateLimitPrefix: string;
  rateLimitKey: string;
  rateLimitPolicy: { points: number; durationSeconds: number };
}

/** The rate-limit upsert, as rate-limiter-flexible builds it through the edge's own limiter factory. */
async function rateLimitUpsert(context: RequestContext): Promise<Statement> {
  const sent: Statement[] = [];
  const recorder = {
    async unsafe(text: string, values: unknown[]) {
      sent.push({ sql: text, params: values.map((v) => (v === null ? null : String(v))) });
      return Object.assign([{ points: 1, expire: Date.now() + 60_000 }], { count: 1 });
    },
  };
  const limiter = postgresLimiters(recorder as unknown as Sql, { keyPrefix: context.rateLimitPrefix })('resources', context.rateLimitPolicy);
  await limiter.consume(context.rateLimitKey);
  return sent[0]!;
}

/** `begin` and the tenant scoping statement of `Db.inTenant`, as postgres.js sends them. */
function tenantTransaction(context: RequestContext): { begin: Statement[]; commit: Statement[] } {
  return {
    begin: [
      { sql: 'begin', params: [] },
      { sql: SET_TENANT_SQL, params: [context.tenantId, APP_ROLE] },
    ],
    commit: [{ sql: 'commit', params: [] }],
  };
}


/** GET-by-id as derived from the code: upsert, then `Db.readInTenant`: begin read only, tenant, GET_RESOURCE_SQL, commit. */
export async function getStatementsFromCode(context: RequestContext, type: string, id: string): Promise<Statement[]> {
  const [, ...tenant] = tenantTransaction(context).begin;
  return [
    await rateLimitUpsert(context),
    { sql: 'begin read only', params: [] },
    ...tenant,
    { sql: GET_RESOURCE_SQL, params: [type, id] },
    ...tenantTransaction(context).commit,
  ];
}

/** The list as derived from the code: upsert, begin, tenant scope, type lookup, page, count, commit. */
export async function listStatementsFromCode(context: RequestContext, options: ListOptions, schema: object, snapshot: string): Promise<Statement[]> {
  const tx = tenantTransaction(context);
  const { page } = buildListStatements(context.tenantId, options, schema);
  const asStatement = (s: { text: string; values: unknown[] }): Statement => ({ sql: s.text, params: s.values.map((v) => (v === null ? null : String(v))) });
  // A list whose total is remembered: its page, and the history's question whether the type changed since `snapshot`.
  return [
    await rateLimitUpsert(context),
    ...tx.begin,
    { sql: FIND_OBJECT_TYPE_SQL, params: [options.type] },
    asStatement(page),
    { sql: CHANGED_SINCE_SQL, params: [`{${options.type}}`, snapshot] },
    ...tx.commit,
  ];
}

/**
 * Differences between captured and code-derived statements: text, and parameters other than the
 * rate limiter's clock values (expiry and now, `$3` and `$4` of the upsert) and the snapshot a
 * remembered total was counted in (`$2` of the history's question).
 */
export function compareStatements(captured: Statement[], derived: Statement[]): string[] {
  const differences: string[] = [];
  if (captured.length !== derived.length) differences.push(`${captured.length} statements captured, ${derived.length} derived`);
  captured.forEach((statement, i) => {
    const expected = derived[i];
    if (!expected) return;
    if (statement.sql.trim() !== expected.sql.trim()) differences.push(`statement ${i + 1}: text differs`);
    // Trailing parameters that differ from request to request.
    const varying = /rate_limits/i.test(statement.sql) ? 2 : statement.sql.trim() === CHANGED_SINCE_SQL.trim() ? 1 : 0;
    const params = statement.params.slice(0, statement.params.length - varying);
    if (JSON.stringify(params) !== JSON.stringify(expected.params.slice(0, expected.params.length - varying))) {
      differences.push(`statement ${i + 1}: parameters differ`);
    }
  });
  return differences;
}
