import { sealedKeyIdOf, type SecretBox } from './secret-box.ts';

/**
 * What a pass of sealing stored secrets again did: how many values it sealed under the current
 * key (plain ones, or ones under a previous key), and how many no key of this process opens, by
 * the key id they name.
 */
export interface ResealReport {
  resealed: number;
  unreadable: Record<string, number>;
}

export const emptyResealReport = (): ResealReport => ({ resealed: 0, unreadable: {} });

/**
 * What to store instead of `stored`: the value sealed under the current key, when it is plain text
 * (written before sealing existed) or sealed under a previous key; undefined when it stays as it
 * is (null, already current, or under a key this process lacks: counted in `report.unreadable`).
 */
export function resealed(box: SecretBox, stored: string | null, context: string, report: ResealReport): string | undefined {
  if (stored === null) return undefined;
  const keyId = sealedKeyIdOf(stored);
  if (keyId === box.keyId) return undefined;
  if (keyId !== undefined && !box.previousKeyIds.includes(keyId)) {
    report.unreadable[keyId] = (report.unreadable[keyId] ?? 0) + 1;
    return undefined;
  }
  return box.seal(keyId === undefined ? stored : box.open(stored, context), context);
}

/** The reports of several passes as one. */
export function mergeResealReports(reports: readonly ResealReport[]): ResealReport {
  const merged = emptyResealReport();
  for (const report of reports) {
    merged.resealed += report.resealed;
    for (const [keyId, count] of Object.entries(report.unreadable)) merged.unreadable[keyId] = (merged.unreadable[keyId] ?? 0) + count;
  }
  return merged;
}
