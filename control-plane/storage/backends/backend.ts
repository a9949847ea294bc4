import type { BlobStore } from '../../blobs/blob-store.ts';
import type { Db } from '../../db/client.ts';
import { DomainError } from '../../errors.ts';
import type { TableIsolation } from '../storage.repo.ts';
import type { DoctorCheck, StorageBackend, StorageChange, StorageLocation } from '../storage.schema.ts';

export interface BackendDeps {
  db: Db;
  blobs: BlobStore;
  /** The database and schema every PostgreSQL-based backend lives in. */
  database(): Promise<{ database: string; schema: string }>;
  /** The tenant's chunks the embedding model refused (the search domain's port), for the doctor. */
  refusedChunks?: (tenantId: string) => Promise<{ count: number; source: string | null; reason: string | null }>;
}

export interface ReconcileOptions {
  /** False: list what would change and change nothing. */
  apply: boolean;
  rebuildSearch: boolean;
  /** Aborts when the step is cancelled: its long statements (index builds, projections) are cancelled in PostgreSQL. */
  signal?: AbortSignal;
}

/** One storage backend: where it serves a tenant, how the tenant's part is ensured, how it is diagnosed. */
export interface BackendDriver {
  readonly backend: StorageBackend;
  location(tenantId: string): Promise<StorageLocation>;
  /** Ensures the tenant's part of the backend and returns what changed; idempotent (nothing changes the second time). */
  reconcile(tenantId: string, options: ReconcileOptions): Promise<StorageChange[]>;
  /** Real checks of the tenant's part; they leave nothing behind. */
  checks(tenantId: string): Promise<DoctorCheck[]>;
}

/**
 * The platform's storage is not in a state that provisioning can build on (a migration is missing,
 * isolation is broken); retrying does not help, fixing the platform does.
 */
export class StorageUnavailableError extends DomainError {
  constructor(message: string, readonly hint: string) {
    super('CONFLICT', message, { hint });
  }
}

/** How long a healthy platform-wide fact (tables isolated, role, migration indexes) is trusted before it is read again. */
export const PLATFORM_FACTS_TTL_MS = 60_000;

/**
 * `read`, answered from memory for `ttlMs` once an answer is `healthy`. Provisioning checks
 * platform-wide facts (the migrations' row-level security, the app role) before it builds on
 * them; they hold for every tenant, so one read serves every provisioning in that time. An
 * unhealthy answer or a failure is never kept: the next call reads again.
 */
export function remembered<T>(read: () => Promise<T>, healthy: (value: T) => boolean, ttlMs = PLATFORM_FACTS_TTL_MS): () => Promise<T> {
  let kept: { value: Promise<T>; until: number } | undefined;
  return () => {
    if (kept && Date.now() < kept.until) return kept.value;
    const entry = { value: read(), until: Date.now() + ttlMs };
    kept = entry;
    const forget = () => {
      if (kept === entry) kept = undefined;
    };
    entry.value.then((value) => {
      try {
        if (!healthy(value)) forget();
      } catch {
        forget();
      }
    }, forget);
    return entry.value;
  };
}

export const ok = (backend: StorageBackend, name: string, message: string): DoctorCheck => ({ backend, name, result: 'ok', message, hint: null });
export const warn = (backend: StorageBackend, name: string, message: string, hint: string): DoctorCheck => ({ backend, name, result: 'warn', message, hint });
export const fail = (backend: StorageBackend, name: string, message: string, hint: string): DoctorCheck => ({ backend, name, result: 'fail', message, hint });

export const MIGRATIONS_HINT = 'apply the platform migrations (npm start applies them; control-plane/db/migrations)';

/** What is wrong with the isolation of each table, if anything. */
export function isolationProblems(tables: readonly TableIsolation[]): string[] {
  const problems: string[] = [];
  for (const t of tables) {
    if (!t.exists) problems.push(`${t.table}: table is missing`);
    else if (!t.rowSecurity) problems.push(`${t.table}: row-level security is disabled`);
    else if (t.tenantPolicies === 0) problems.push(`${t.table}: no policy limits rows to the current tenant`);
    else if (t.ownedByAppRole) problems.push(`${t.table}: owned by svc_app, which row-level security does not apply to`);
  }
  return problems;
}

/** A doctor check for the isolation of a backend's tables. */
export function isolationCheck(backend: StorageBackend, tables: readonly TableIsolation[]): DoctorCheck {
  const problems = isolationProblems(tables);
  if (problems.length === 0) {
    return ok(backend, 'row-level-security', `${tables.map((t) => t.table).join(', ')}: row-level security on, with a tenant policy`);
  }
  return fail(backend, 'row-level-security', problems.join('; '), problems.some((p) => p.includes('missing')) ? MIGRATIONS_HINT : 'restore the table’s row-level security and tenant policy from its migration');
}

/** Throws when a backend's tables are not there or not isolated: provisioning never builds on them. */
export function requireIsolation(backend: StorageBackend, tables: readonly TableIsolation[]): void {
  const problems = isolationProblems(tables);
  if (problems.length) throw new StorageUnavailableError(`${backend} storage is not usable: ${problems.join('; ')}`, MIGRATIONS_HINT);
}
