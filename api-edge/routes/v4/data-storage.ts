import { Elysia } from 'elysia';
import { ValidationError, type ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { jsonObjectBody } from '../v3/shape.ts';

/** An optional JSON object body: none (or empty) means every default. */
const optionalObject = (body: unknown) => (body === undefined || body === '' || body === null ? {} : jsonObjectBody(body));

const FLAGS = new Set(['dryRun', 'rebuildSearch']);

/**
 * The request's options from its body and its query string alike (`?dryRun=true`), so that a flag
 * sent in either place is obeyed, never silently dropped; the procedure's strict schema refuses
 * unknown names. A name given in both places is a 400.
 */
function optionsOf(request: Request, body: unknown): Record<string, unknown> {
  const options = { ...optionalObject(body) } as Record<string, unknown>;
  for (const [name, value] of new URL(request.url).searchParams) {
    if (Object.hasOwn(options, name)) throw ValidationError.field(name, 'is given in both the query string and the body');
    // Defined, not assigned, so that every name (`__proto__` included) is an own key the procedure checks.
    Object.defineProperty(options, name, {
      value: FLAGS.has(name) && (value === 'true' || value === 'false') ? value === 'true' : value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return options;
}

/**
 * v4 data: a tenant's storage. Status and doctor are reads; provision answers 200 when its workflow
 * finished within the bounded wait (or for a dry run) and 202 while it is still running.
 */
export function v4StorageRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-data-storage' })
    .get('/data/resources/:tenantId/storage', ({ request, params }) => cp.query(calls.of(request, params.tenantId), 'storage', 'status', {}))
    .get('/data/resources/:tenantId/storage/doctor', ({ request, params }) => cp.query(calls.of(request, params.tenantId), 'storage', 'doctor', {}))
    .post('/data/resources/:tenantId/storage/provision', async ({ request, params, body, set }) => {
      const outcome = await cp.mutation(calls.of(request, params.tenantId), 'storage', 'provision', optionsOf(request, body) as never);
      set.status = outcome.state === 'running' ? 202 : 200;
      return outcome;
    })
    .post('/data/resources/:tenantId/storage/sync-schema', ({ request, params, body }) =>
      cp.mutation(calls.of(request, params.tenantId), 'storage', 'syncSchema', optionsOf(request, body) as never),
    );
}
