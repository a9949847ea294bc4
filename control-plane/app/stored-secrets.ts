import type { ResealReport } from '../secrets/reseal.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { Services } from './services.ts';

/** Stored secrets are sealed under a key this process was not given: they would fail where they are used. */
export class UnreadableSecretsError extends Error {}

/**
 * Seals every stored secret the platform keeps usable (webhook and configuration secrets, realtime
 * signing keys) under the current operator key: those stored in plain text by an earlier version,
 * and those sealed under a previous key (`SECRETS_KEY_PREVIOUS`). Run when an API-serving process
 * starts; idempotent, and safe beside other instances doing the same. Values under a key this
 * process lacks are left as they are: with `refuseUnreadable` (production) that is an
 * {@link UnreadableSecretsError} naming the keys, otherwise a line in the log.
 */
export async function sealStoredSecretsOnStart(
  services: Pick<Services, 'resealStoredSecrets'>,
  box: SecretBox,
  options: { refuseUnreadable: boolean; log: (message: string) => void },
): Promise<ResealReport> {
  const report = await services.resealStoredSecrets();
  if (report.resealed > 0) options.log(`sealed ${report.resealed} stored secret${report.resealed === 1 ? '' : 's'} under SECRETS_KEY (key id ${box.keyId})`);
  const unreadable = Object.entries(report.unreadable);
  if (unreadable.length > 0) {
    const counts = unreadable.map(([keyId, count]) => `${count} under key id ${keyId}`).join(', ');
    const given = [`SECRETS_KEY (key id ${box.keyId})`, ...(box.previousKeyIds.length ? [`SECRETS_KEY_PREVIOUS (key id ${box.previousKeyIds.join(', ')})`] : [])].join(' and ');
    const message = `stored secrets are sealed under keys this process was not given (${counts}); it has ${given}: give the key they were sealed with in SECRETS_KEY_PREVIOUS, and it seals them again under SECRETS_KEY`;
    if (options.refuseUnreadable) throw new UnreadableSecretsError(message);
    options.log(message);
  }
  return report;
}
