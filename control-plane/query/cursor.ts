import { createHash } from 'node:crypto';
import { ValidationError } from '../errors.ts';

interface CursorPayload {
  /** Fingerprint of the query the cursor belongs to. */
  q: string;
  /** Sort key values of the last row returned, as text. */
  k: Array<string | null>;
}

/** A short, stable fingerprint of everything that shapes a result order: type, filters, sort. */
export function queryFingerprint(query: unknown): string {
  return createHash('sha256').update(JSON.stringify(query)).digest('base64url').slice(0, 16);
}

export function encodeCursor(fingerprint: string, keys: Array<string | null>): string {
  const payload: CursorPayload = { q: fingerprint, k: keys };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

/** Decodes a cursor and checks that it was issued for the same query; 400 otherwise. */
export function decodeCursor(cursor: string, fingerprint: string, keyCount: number): Array<string | null> {
  let payload: CursorPayload;
  try {
    payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as CursorPayload;
  } catch {
    throw ValidationError.field('cursor', 'is not a valid cursor');
  }
  const keysOk = Array.isArray(payload?.k) && payload.k.length === keyCount && payload.k.every((k) => k === null || typeof k === 'string');
  if (typeof payload?.q !== 'string' || !keysOk) throw ValidationError.field('cursor', 'is not a valid cursor');
  if (payload.q !== fingerprint) throw ValidationError.field('cursor', 'was issued for a different sort or filter');
  return payload.k;
}
