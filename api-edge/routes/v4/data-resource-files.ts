import { Elysia } from 'elysia';
import { untrusted, type ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { fileResponse } from '../file-download.ts';
import { queryValue } from '../request-input.ts';

/**
 * v4 file properties of a resource: an upload is the request's body (`application/octet-stream`,
 * `?filename=`), streamed to the control plane unread here; a download streams the stored bytes
 * back with the file's type and name.
 */
export function v4ResourceFileRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-data-resource-files' })
    .post(
      '/data/resources/:tenantId/:objectType/:id/files/:propertyName',
      async ({ request, params, set }) => {
        const ref = { type: params.objectType, id: params.id, property: params.propertyName };
        const filename = queryValue(new URL(request.url).searchParams, 'filename');
        const contentType = request.headers.get('content-type') ?? 'application/octet-stream';
        const length = request.headers.get('content-length');
        const declaredBytes = length !== null && /^\d+$/.test(length) ? Number(length) : undefined;
        // No body is an empty file.
        const stream = request.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
        try {
          return await cp.upload(calls.of(request, params.tenantId), 'resources', 'uploadFile', { stream, meta: untrusted({ ...ref, filename, contentType, declaredBytes }) });
        } catch (error) {
          // A refused upload may leave its body unread: the connection closes, so that the client does not send the rest into the next request.
          set.headers.connection = 'close';
          throw error;
        }
      },
      // The body is the file: Elysia must not read it.
      { parse: 'none' },
    )
    .get('/data/resources/:tenantId/:objectType/:id/files/:propertyName', async ({ request, params }) => {
      const ref = { type: params.objectType, id: params.id, property: params.propertyName };
      return fileResponse(cp.subscription(calls.of(request, params.tenantId), 'resources', 'readFile', ref, { signal: request.signal }));
    })
    .delete('/data/resources/:tenantId/:objectType/:id/files/:propertyName', async ({ request, params, set }) => {
      await cp.mutation(calls.of(request, params.tenantId), 'resources', 'deleteFile', { type: params.objectType, id: params.id, property: params.propertyName });
      set.status = 204;
    });
}
