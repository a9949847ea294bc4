import { isSealed, type SecretBox } from '../secrets/secret-box.ts';
import { secretHintOf, type ReceivingEndpoint } from './webhooks.repo.ts';

/** What a sealed secret is bound to: its endpoint (the tenant and the source, which never change). */
export const secretContext = (tenantId: string, source: string) => `webhook_endpoints.secret:${tenantId}:${source}`;

export type WebhookSecrets = ReturnType<typeof createWebhookSecrets>;

/** Endpoint secrets sealed with the operator's key (`secrets`), bound to their endpoint; a process without the key refuses to touch them. */
export function createWebhookSecrets(secrets: SecretBox | undefined) {
  function box(): SecretBox {
    if (!secrets) throw new Error('webhook secrets need the operator key (SECRETS_KEY), which this process was not given');
    return secrets;
  }

  const sealed = (tenantId: string, source: string, secret: string) => ({ sealed: box().seal(secret, secretContext(tenantId, source)), hint: secretHintOf(secret) });

  /** A stored secret's plain text: sealed ones opened, plain ones (an earlier version's, not yet sealed) as they are. */
  const opened = (endpoint: ReceivingEndpoint, stored: string) => (isSealed(stored) ? box().open(stored, secretContext(endpoint.tenantId, endpoint.source)) : stored);

  return { box, sealed, opened };
}
