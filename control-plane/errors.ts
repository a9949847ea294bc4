import { z } from 'zod';

/**
 * Domain errors. Services throw these; the tRPC error map turns them into transport errors once,
 * and every REST surface renders them as `{error: {code, message, details?, retryAfter?}}`.
 */
export const ERROR_CODES = [
  'VALIDATION_ERROR',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'CONFLICT',
  'VERSION_CONFLICT',
  'SCHEMA_INCOMPATIBLE',
  'PRECONDITION_REQUIRED',
  'RATE_LIMIT_EXCEEDED',
  'FILE_TOO_LARGE',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_FILE_TYPE',
  'INTERNAL_ERROR',
  'NOT_IMPLEMENTED',
  'BAD_GATEWAY',
  'SERVICE_UNAVAILABLE',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The `error` of every REST error body; `retryAfter` (seconds) on 429 and 503 only. */
export const AppErrorBodySchema = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
  retryAfter: z.number().int().optional(),
});

export interface AppErrorBody {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
  retryAfter?: number;
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }

  toBody(): AppErrorBody {
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }
}

/** The issue of text holding the NUL character, which PostgreSQL cannot store. */
export const NUL_ISSUE = 'must not contain the NUL character (U+0000)';
/** The issue of a `__proto__` key, which JavaScript objects reserve: validated copies of an object drop it. */
export const RESERVED_KEY_ISSUE = 'is a name reserved by JavaScript (__proto__) and cannot be a key';
/** The issue of text holding half of a UTF-16 surrogate pair, which is no Unicode text. */
export const UNPAIRED_SURROGATE_ISSUE = 'must be Unicode text (it holds an unpaired surrogate such as \\ud800)';

export class ValidationError extends DomainError {
  constructor(message: string, details?: { field?: string; issue?: string } & Record<string, unknown>) {
    super('VALIDATION_ERROR', message, details);
  }

  static field(field: string, issue: string): ValidationError {
    return new ValidationError(`${field} ${issue}`, { field, issue });
  }
}

export class NotFoundError extends DomainError {
  constructor(what: string) {
    super('NOT_FOUND', `${what} not found`);
  }
}

export class UnauthorizedError extends DomainError {
  constructor(message = 'authentication required') {
    super('UNAUTHORIZED', message);
  }
}

export class ForbiddenError extends DomainError {
  constructor(message = 'insufficient permissions', details?: Record<string, unknown>) {
    super('FORBIDDEN', message, details);
  }
}

/** An upload that would take the bytes a tenant stores past its plan's quota (storage.blob's maxStoredBytes). */
export class StorageQuotaError extends DomainError {
  constructor(quotaBytes: number, usedBytes: number) {
    super('FILE_TOO_LARGE', `the upload would pass the tenant's storage quota of ${quotaBytes} bytes (${usedBytes} bytes are stored): remove files, or ask for a larger plan`, {
      quota: quotaBytes,
      used: usedBytes,
    });
  }
}

export class ConflictError extends DomainError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('CONFLICT', message, details);
  }
}

/** The Kubernetes object that declares a tenant or an app (declarations/declarations.schema.ts `DeclaringObject`). */
interface Holder {
  kind: 'Tenant' | 'App';
  name: string;
  uid: string;
}

/** Another Kubernetes object declares this tenant or app; `holder` names it, so the operator can check it still exists. */
export class DeclaredElsewhereError extends ConflictError {
  constructor(
    what: string,
    readonly holder: Holder,
  ) {
    super(`${what} is declared by ${holder.kind} "${holder.name}"`, { declaredBy: { kind: holder.kind, name: holder.name } });
  }
}

export class VersionConflictError extends DomainError {
  constructor(expected: number, actual: number) {
    super('VERSION_CONFLICT', `version ${expected} is stale; current version is ${actual}`, { expected, actual, currentVersion: actual });
  }
}

/** A write that must name the version it replaces named none (v4: neither `version` nor `If-Match`). */
export class PreconditionRequiredError extends DomainError {
  constructor() {
    super('PRECONDITION_REQUIRED', 'the version being replaced is required: send version in the body or an If-Match header');
  }
}

/** An object type change that stored resources would not satisfy; nothing was changed. */
export class SchemaIncompatibleError extends DomainError {
  constructor(objectType: string, resourceIds: string[], total: number) {
    super('SCHEMA_INCOMPATIBLE', `${total} stored ${objectType} resource(s) would not satisfy the new schema`, { resourceIds, total });
  }
}

/** A request body over the API's limit (uploads, with their own limit, answer FILE_TOO_LARGE). */
export class PayloadTooLargeError extends DomainError {
  constructor(limitBytes: number) {
    super('PAYLOAD_TOO_LARGE', `request body is larger than ${limitBytes} bytes`, { limit: limitBytes });
  }
}

/** An uploaded file over its limit (v3 documents: 100 MB). */
export class FileTooLargeError extends DomainError {
  constructor(limitBytes: number) {
    super('FILE_TOO_LARGE', `file is larger than ${limitBytes} bytes`, { limit: limitBytes });
  }
}

/** A file of a type its destination does not take. */
export class UnsupportedFileTypeError extends DomainError {
  constructor(contentType: string, accepted: readonly string[]) {
    super('UNSUPPORTED_FILE_TYPE', `a file of type ${contentType} is not accepted here; accepted: ${accepted.join(', ')}`, { contentType, accepted });
  }
}

/** What this deployment cannot do (an external identity provider without dynamic client registration, say). */
export class NotImplementedError extends DomainError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('NOT_IMPLEMENTED', message, details);
  }
}

/** A service the platform relies on (an external identity provider) failed or answered what it should not. */
export class BadGatewayError extends DomainError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('BAD_GATEWAY', message, details);
  }
}

export class RateLimitError extends DomainError {
  constructor(
    readonly retryAfterSeconds: number,
    message = 'too many requests',
  ) {
    super('RATE_LIMIT_EXCEEDED', message);
  }

  override toBody(): AppErrorBody {
    return { code: this.code, message: this.message, retryAfter: this.retryAfterSeconds };
  }
}

/**
 * A dependency the answer needs (the database) is unreachable or did not answer in time: nothing
 * was done that the caller was told of, and the same request may be sent again after
 * `retryAfterSeconds` (with its `Idempotency-Key`, a write is then done at most once).
 */
export class ServiceUnavailableError extends DomainError {
  constructor(
    message = 'the service is unavailable for a moment: retry shortly',
    readonly retryAfterSeconds = 1,
  ) {
    super('SERVICE_UNAVAILABLE', message);
  }

  override toBody(): AppErrorBody {
    return { code: this.code, message: this.message, retryAfter: this.retryAfterSeconds };
  }
}

export const HTTP_STATUS: Record<ErrorCode, number> = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  VERSION_CONFLICT: 409,
  SCHEMA_INCOMPATIBLE: 409,
  PRECONDITION_REQUIRED: 428,
  FILE_TOO_LARGE: 413,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_FILE_TYPE: 415,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  NOT_IMPLEMENTED: 501,
  BAD_GATEWAY: 502,
  SERVICE_UNAVAILABLE: 503,
};
