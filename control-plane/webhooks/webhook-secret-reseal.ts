import type { Db } from '../db/client.ts';
import { emptyResealReport, resealed, type ResealReport } from '../secrets/reseal.ts';
import { sealedUnderPattern, type SecretBox } from '../secrets/secret-box.ts';
import { secretContext } from './webhook-secrets.ts';
import { resealSecrets, secretsNotSealedLike } from './webhooks.repo.ts';

/**
 * Seals again, under the current operator key, the endpoint secrets (current and previous) an
 * earlier version stored in plain text and those sealed under a previous key
 * (`SECRETS_KEY_PREVIOUS`); run when the control plane starts. Idempotent, and safe beside other
 * instances doing the same.
 */
export async function resealWebhookSecrets(db: Db, box: SecretBox): Promise<ResealReport> {
  const report = emptyResealReport();
  for (const row of await db.system((tx) => secretsNotSealedLike(tx, sealedUnderPattern(box.keyId)))) {
    const context = secretContext(row.tenantId, row.source);
    const secret = resealed(box, row.secret, context, report);
    const previousSecret = resealed(box, row.previousSecret, context, report);
    if (secret === undefined && previousSecret === undefined) continue;
    await db.system((tx) => resealSecrets(tx, row, secret ?? row.secret, previousSecret ?? row.previousSecret));
    report.resealed += (secret === undefined ? 0 : 1) + (previousSecret === undefined ? 0 : 1);
  }
  return report;
}
