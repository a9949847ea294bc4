import { randomUUID } from 'node:crypto';
import { CliError, type ErrorBody } from '../errors.ts';
import type { Answer, RequestBody } from '../api/wire.ts';
import type { ApiClient } from './api-client.ts';
import { createChatService } from './chat.service.ts';

export interface VerifyCheck {
  name: string;
  call: string;
  ok: boolean;
  /** The check did not run: what it needs was not given. */
  skipped?: boolean;
  detail: string;
  error?: ErrorBody;
}

export interface VerifyReport {
  ok: boolean;
  checks: VerifyCheck[];
  summary: { total: number; passed: number; failed: number; skipped: number };
}

export interface CallsOptions {
  tenantId: string;
  resourceType?: string;
  resourceId?: string;
  tenantRecord?: string;
  userEmail?: string;
  chat?: { workflow: string; stage: string; message: string };
}

const seg = encodeURIComponent;

function report(checks: VerifyCheck[]): VerifyReport {
  const failed = checks.filter((c) => !c.ok && !c.skipped).length;
  const skipped = checks.filter((c) => c.skipped).length;
  return { ok: failed === 0, checks, summary: { total: checks.length, passed: checks.length - failed - skipped, failed, skipped } };
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
          const types = await api.request<Answer<'listObjectTypes'>>('GET', '/v4/data/resources/object-types');
          return `${types.body.data.length} visible`;
        }),
        await check('schema', 'GET /v4/data/resources/schema/{tenantId}', async () => {
          const id = await tenantId();
          const schema = await api.request<Answer<'listPublishedObjectTypes'>>('GET', `/v4/data/resources/schema/${encodeURIComponent(id)}`, { subject: `Tenant ${id}` });
          return `${schema.body.data.length} published to ${id}`;
        }),
      ];
      return { ok: checks.every((c) => c.ok), checks };
    },

    /** The tenant's storage: its status answers, and the doctor finds no failing check (warnings pass). */
    async storage(tenantId: string): Promise<VerifyReport> {
      const base = `/v4/data/resources/${seg(tenantId)}/storage`;
      const subject = `Tenant ${tenantId}`;
      return report([
        await check('storage status', 'GET /v4/data/resources/{tenantId}/storage', async () => {
          const { backends } = (await api.request<Answer<'getStorageStatus'>>('GET', base, { subject })).body;
          return backends.length ? backends.map((b) => `${b.backend} ${b.status}`).join(', ') : 'answered';
        }),
        await check('storage doctor', 'GET /v4/data/resources/{tenantId}/storage/doctor', async () => {
          const doctor = (await api.request<Answer<'checkStorage'>>('GET', `${base}/doctor`, { subject })).body;
          const { ok, warn, fail } = doctor.summary;
          const line = `${doctor.result}: ${ok} ok, ${warn} warn, ${fail} fail`;
          if (doctor.result === 'fail') {
            const failing = doctor.checks.filter((c) => c.result === 'fail').map((c) => `${c.name}: ${c.message}`);
            throw new CliError('E203', { details: `${line} (${failing.join('; ')})` });
          }
          return line;
        }),
      ]);
    },

    /**
     * The calls an application of the tenant makes, each once: health, object types, schema, a
     * resource list, query and read, a user's memberships, and (only when asked, as it writes a
     * conversation) a chat message. A check whose input is missing is skipped, not failed.
     */
    async calls(options: CallsOptions): Promise<VerifyReport> {
      const { tenantId } = options;
      const subject = `Tenant ${tenantId}`;
      const skip = (name: string, call: string, detail: string): VerifyCheck => ({ name, call, ok: true, skipped: true, detail });
      const checks: VerifyCheck[] = [];
      checks.push(
        await check('health', 'GET /health', async () => `status ${(await api.request<{ status: string }>('GET', '/health', { auth: false })).body.status}`),
      );
      let published: Answer<'listPublishedObjectTypes'>['data'] = [];
      checks.push(
        await check('object types', 'GET /v4/data/resources/object-types', async () => {
          const types = await api.request<Answer<'listObjectTypes'>>('GET', '/v4/data/resources/object-types', { query: { tenant_id: tenantId }, subject });
          return `${types.body.data.length} visible`;
        }),
        await check('schema', 'GET /v4/data/resources/schema/{tenantId}', async () => {
          published = (await api.request<Answer<'listPublishedObjectTypes'>>('GET', `/v4/data/resources/schema/${seg(tenantId)}`, { subject })).body.data;
          return `${published.length} published`;
        }),
      );
      const type = options.resourceType ?? published[0]?.key;
      let firstId: string | undefined;
      if (!type) {
        checks.push(skip('resource list', 'GET /v4/data/resources/{tenantId}/{objectType}', 'no --resource-type and no published type'));
        checks.push(skip('resource query', 'POST /v4/data/resources/{tenantId}/query', 'no --resource-type and no published type'));
      } else {
        checks.push(
          await check('resource list', 'GET /v4/data/resources/{tenantId}/{objectType}', async () => {
            const page = (await api.request<Answer<'listTenantResources'>>('GET', `/v4/data/resources/${seg(tenantId)}/${seg(type)}`, { query: { limit: 1 }, subject: `Object type ${type}` })).body;
            firstId = page.data[0]?.id;
            return `${type}: ${page.total} in all`;
          }),
          await check('resource query', 'POST /v4/data/resources/{tenantId}/query', async () => {
            const body: RequestBody<'queryTenantResources'> = { types: [type], limit: 1 };
            const page = (await api.request<Answer<'queryTenantResources'>>('POST', `/v4/data/resources/${seg(tenantId)}/query`, { body, subject })).body;
            return `${type}: ${page.data.length} on the first page of 1`;
          }),
        );
      }
      const id = options.resourceId ?? firstId;
      checks.push(
        type && id
          ? await check('resource get', 'GET /v4/data/resources/{tenantId}/{objectType}/{id}', async () => {
              const resource = (await api.request<Answer<'getTenantResource', 200>>('GET', `/v4/data/resources/${seg(tenantId)}/${seg(type)}/${seg(id)}`, { subject: `${type} ${id}` })).body;
              return `${type} ${resource.id} at version ${resource.version}`;
            })
          : skip('resource get', 'GET /v4/data/resources/{tenantId}/{objectType}/{id}', 'no --resource-id and no resource listed'),
      );
      if (options.userEmail) {
        let oid: string | undefined;
        checks.push(
          await check('user by e-mail', 'GET /v4/platform/users/by-email', async () => {
            const user = (await api.request<Answer<'findUserByEmail'>>('GET', '/v4/platform/users/by-email', { query: { email: options.userEmail! }, subject: `User ${options.userEmail}` })).body;
            oid = user.id;
            return `${user.email} is ${user.id}`;
          }),
        );
        const tenantRecord = options.tenantRecord ?? tenantId;
        checks.push(
          oid
            ? await check('memberships', 'GET /v4/platform/users/{oid}/memberships', async () => {
                const memberships = (await api.request<Answer<'listUserMemberships'>>('GET', `/v4/platform/users/${seg(oid!)}/memberships`, { subject: `User ${oid}` })).body.data;
                const member = memberships.find((m) => m.id === tenantRecord || m.slug === tenantRecord);
                if (!member) throw new CliError('E202', { resource: `Membership of ${options.userEmail} in ${tenantRecord}` });
                return `member of ${tenantRecord}${member.roles?.length ? ` as ${member.roles.join(', ')}` : ''}`;
              })
            : skip('memberships', 'GET /v4/platform/users/{oid}/memberships', 'the user was not found'),
        );
      } else {
        checks.push(skip('user by e-mail', 'GET /v4/platform/users/by-email', 'no --user-email'));
        checks.push(skip('memberships', 'GET /v4/platform/users/{oid}/memberships', 'no --user-email'));
      }
      const chatCall = 'POST /v4/ai/chat/{tenantId}/{workflowId}/{stage}';
      if (options.chat) {
        const { workflow, stage, message } = options.chat;
        checks.push(
          await check('chat', chatCall, async () => {
            const answer = await createChatService(api).send({ tenantId, workflow, stage, message, conversationId: randomUUID(), params: {} });
            return `answered ${answer.answer.length} characters in conversation ${answer.conversationId}`;
          }),
        );
      } else checks.push(skip('chat', chatCall, 'no --include-chat'));
      return report(checks);
    },
  };
}
