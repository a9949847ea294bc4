import type { Sql } from 'postgres';
import { emptyResealReport, resealed, type ResealReport } from '../secrets/reseal.ts';
import { sealedUnderPattern, type SecretBox } from '../secrets/secret-box.ts';
import { keysNotSealedLike, resealKey, type StoredSigningKey } from './realtime.repo.ts';

/** What a sealed signing key is bound to: its number, so that a sealed key copied onto another row does not open there. */
const contextOf = (id: number) => `realtime_signing_keys.secret:${id}`;

/** Signing keys are sealed at rest with the operator key, like webhook secrets: a database reader cannot sign connection tokens. */
export function createSigningKeySeal(secrets: SecretBox | undefined) {
  function box(): SecretBox {
    if (!secrets) throw new Error('realtime signing keys need the operator key (SECRETS_KEY), which this process was not given');
    return secrets;
  }

  return {
    /** The sealed form of the key numbered `id`. */
    seal: (id: number, key: Uint8Array): string => box().seal(Buffer.from(key).toString('base64'), contextOf(id)),

    /** The key itself: opened, or as an earlier version stored it before it was sealed. */
    open(id: number, stored: StoredSigningKey): Uint8Array {
      if (stored.sealedSecret === null) return stored.secret!;
      return new Uint8Array(Buffer.from(box().open(stored.sealedSecret, contextOf(id)), 'base64'));
    },

    /**
     * Seals the keys an earlier version stored in plain text, and those sealed under a previous
     * operator key, under the current one; run when the control plane starts. Idempotent, and safe
     * beside other instances doing the same.
     */
    async resealStored(sql: Sql): Promise<ResealReport> {
      const report = emptyResealReport();
      for (const { id, stored } of await keysNotSealedLike(sql, sealedUnderPattern(box().keyId))) {
        const sealed =
          stored.sealedSecret === null
            ? box().seal(Buffer.from(stored.secret!).toString('base64'), contextOf(id))
            : resealed(box(), stored.sealedSecret, contextOf(id), report);
        if (sealed === undefined) continue;
        await resealKey(sql, id, stored, sealed);
        report.resealed += 1;
      }
      return report;
    },
  };
}
