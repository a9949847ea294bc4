import { createHash } from 'node:crypto';
import { UUID } from '../ids.ts';

/** The namespace of v4 conversation names (a random UUID, fixed once: changing it would orphan every named conversation). */
const NAMESPACE = Buffer.from('5b0f2c7e8d3a4e1f9c6b2a7d4e8f1c3b', 'hex');

/**
 * The stored id of a conversation a v4 client names: a UUID names itself; any other name (`abc`,
 * `support-42`) maps to its name-based UUID (RFC 9562 version 5), so that the same name reaches the
 * same conversation. Conversations are keyed by tenant, user and id, so a name is the caller's own.
 */
export function conversationIdOf(name: string): string {
  if (UUID.test(name)) return name.toLowerCase();
  const bytes = createHash('sha1').update(NAMESPACE).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
