import { CliError, type ErrorBody } from '../errors.ts';
import type { ApiClient } from './api-client.ts';

export interface VerifyCheck {
  name: string;
  call: string;
  ok: boolean;
  detail: string;
  error?: ErrorBody;
}

/**
 * Read-only checks of the platform and the tenant: the gateway's health, the object types the
 * caller sees, and the tenant's published schema. Every check runs, whatever the others gave.
 */
export function createVerifyService(api: ApiClient) {
  const check = async (name: string, call: string, run: () => Promise<string>): Promise<VerifyCheck> => {
    try {
      return { name, call, ok: true, detail: await run() };
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      return { name, call, ok: false, detail: error.message, error: error.toJSON() };
    }
  };
  return {
    async run(tenantId: () => Promise<string>): Promise<{ ok: boolean; checks: VerifyCheck[] }> {
      const checks = [
        await check('health', 'GET /health', async () => {
          const health = await api.request<{ status: string }>('GET', '/health', { auth: false });
          return `status ${health.body.status}`;
        }),
        await check('object types', 'GET /v4/data/resources/object-types', async () => {
          const types = await api.request<{ data: unknown[] }>('GET', '/v4/data/resources/object-types');
          return `${types.body.data.length} visible`;
        }),
        await check('schema', 'GET /v4/data/resources/schema/{tenantId}', async () => {
          const id = await tenantId();
          const schema = await api.request<{ data: unknown[] }>('GET', `/v4/data/resources/schema/${encodeURIComponent(id)}`, { subject: `Tenant ${id}` });
          return `${schema.body.data.length} published to ${id}`;
        }),
      ];
      return { ok: checks.every((c) => c.ok), checks };
    },
  };
}
