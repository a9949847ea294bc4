import { TRPCError } from '@trpc/server';
import { databaseUnavailable, isDatabaseUnavailable } from '../db/faults.ts';
import { DomainError, NUL_ISSUE, type AppErrorBody } from '../errors.ts';

interface ZodLikeIssue {
  path: PropertyKey[];
  message: string;
  /** Set on `unrecognized_keys` issues. */
  keys?: string[];
}

function zodIssues(cause: unknown): ZodLikeIssue[] | undefined {
  const issues = (cause as { issues?: unknown })?.issues;
  return Array.isArray(issues) ? (issues as ZodLikeIssue[]) : undefined;
}

/**
 * PostgreSQL refused a text or JSON value it cannot store: the NUL character, the only one a
 * JavaScript string can hold that UTF-8 text in PostgreSQL cannot (SQLSTATE 22021 for text, 22P05
 * for `\u0000` in JSON). The statement's transaction is rolled back, so nothing has changed.
 */
function isUnstorableText(cause: unknown): boolean {
  const sqlState = (cause as { code?: unknown } | null)?.code;
  return sqlState === '22021' || sqlState === '22P05';
}

/**
 * The one mapping from anything a procedure throws to the REST error body: domain errors keep
 * their code, input validation failures name the field, a database that is away or too slow is
 * 503 SERVICE_UNAVAILABLE with `retryAfter`, and everything else is an internal error whose detail
 * stays in the server log.
 */
export function toAppErrorBody(error: unknown): AppErrorBody {
  const cause = error instanceof TRPCError ? error.cause : error;
  if (cause instanceof DomainError) return cause.toBody();
  if (isDatabaseUnavailable(cause)) return databaseUnavailable().toBody();
  if (isUnstorableText(cause)) return { code: 'VALIDATION_ERROR', message: `text ${NUL_ISSUE}`, details: { field: '(input)', issue: NUL_ISSUE } };
  const issues = error instanceof TRPCError && error.code === 'BAD_REQUEST' ? zodIssues(cause) : undefined;
  if (issues?.length) {
    const first = issues[0]!;
    const path = first.keys?.length ? [...first.path, first.keys[0]!] : first.path;
    // A request body passed whole as `changes` (beside the path's id): its fields are named as the client sent them.
    const field = (path[0] === 'changes' ? path.slice(1) : path).map(String).join('.') || '(body)';
    return { code: 'VALIDATION_ERROR', message: `${field} ${first.message}`, details: { field, issue: first.message } };
  }
  if (error instanceof TRPCError) {
    if (error.code === 'BAD_REQUEST' || error.code === 'PARSE_ERROR') return { code: 'VALIDATION_ERROR', message: 'invalid request' };
    if (error.code === 'NOT_FOUND') return { code: 'NOT_FOUND', message: 'not found' };
    if (error.code === 'UNAUTHORIZED') return { code: 'UNAUTHORIZED', message: 'authentication required' };
    if (error.code === 'FORBIDDEN') return { code: 'FORBIDDEN', message: 'insufficient permissions' };
  }
  return { code: 'INTERNAL_ERROR', message: 'internal error' };
}
