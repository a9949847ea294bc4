import { ValidationError } from '../errors.ts';

/** Where a blob store keeps its objects, for routing and diagnostics; never holds credentials. */
export interface BlobStoreInfo {
  /** `local-directory`, or an object store such as `s3`. */
  kind: string;
  /** The directory, or the bucket address. */
  location: string;
}

export interface BlobObject {
  key: string;
  size: number;
  modifiedAt: Date;
}

/**
 * Objects under `/`-separated keys (S3's model: no directories, only key prefixes). A tenant's
 * objects live under `tenants/<tenantId>/`.
 */
export interface BlobStore {
  info(): BlobStoreInfo;
  /**
   * Writes the whole object, replacing any; a reader never sees a partial object. A streamed body
   * is written as it is read; if reading it fails, nothing is left behind.
   */
  put(key: string, body: Uint8Array | string | AsyncIterable<Uint8Array>): Promise<void>;
  /** The object's bytes, or `undefined` when there is none. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** The object's bytes as they are read, never held whole; `undefined` when there is none. */
  read(key: string): Promise<AsyncIterable<Uint8Array> | undefined>;
  head(key: string): Promise<BlobObject | undefined>;
  /** Removes the object; `false` when there was none. */
  delete(key: string): Promise<boolean>;
  /** Objects whose key starts with `prefix` (which ends with `/`), in key order, at most `limit`. */
  list(prefix: string, limit?: number): Promise<BlobObject[]>;
}

const SEGMENT = /^[A-Za-z0-9._-]{1,200}$/;

/** Checks a key (or, with a trailing `/`, a prefix): segments of letters, digits, `.`, `_`, `-`; no `.` or `..`. */
export function checkBlobKey(key: string, { prefix = false } = {}): string {
  const body = prefix && key.endsWith('/') ? key.slice(0, -1) : key;
  const segments = body.split('/');
  if (key.length > 1024 || !segments.every((s) => SEGMENT.test(s) && s !== '.' && s !== '..')) {
    throw ValidationError.field('key', `"${key}" is not a valid blob ${prefix ? 'prefix' : 'key'}`);
  }
  return key;
}

/** The key prefix of a tenant's area. */
export const tenantBlobPrefix = (tenantId: string) => `tenants/${tenantId}/`;
