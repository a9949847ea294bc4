import { Elysia } from 'elysia';
import { untrusted, type ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { queryValue } from '../request-input.ts';

/** `Content-Disposition` naming the file: a plain-ASCII fallback and the exact name (RFC 6266, RFC 8187). */
function attachment(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/**
 * v4 file properties of a resource: an upload is the request's body (`application/octet-stream`,
 * `?filename=`), streamed to the control plane unread here; a download streams the stored bytes
 * back with the file's type and name.
 */
export function v4ResourceFileRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v4-data-resource-files' })
    .post(
      '/data/resources/:tenantId/:objectType/:id/files/:propertyName',
      async ({ request, params }) => {
        const ref = { type: params.objectType, id: params.id, property: params.propertyName };
        const filename = queryValue(new URL(request.url).searchParams, 'filename');
        const contentType = request.headers.get('content-type') ?? 'application/octet-stream';
        // No body is an empty file.
        const stream = request.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
        return cp.upload(calls.of(request, params.tenantId), 'resources', 'uploadFile', { stream, meta: untrusted({ ...ref, filename, contentType }) });
      },
      // The body is the file: Elysia must not read it.
      { parse: 'none' },
    )
    .get('/data/resources/:tenantId/:objectType/:id/files/:propertyName', async ({ request, params }) => {
      const ref = { type: params.objectType, id: params.id, property: params.propertyName };
      const pieces = cp.subscription(calls.of(request, params.tenantId), 'resources', 'readFile', ref, { signal: request.signal })[Symbol.asyncIterator]();
      // The first piece describes the file; an error (404, 403) comes before it, as a JSON answer.
      const first = await pieces.next();
      const file = !first.done && 'file' in first.value ? first.value.file : undefined;
      if (!file) throw new Error('the file download ended before describing the file');
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = await pieces.next();
          if (next.done) controller.close();
          else if ('base64' in next.value) controller.enqueue(Buffer.from(next.value.base64, 'base64'));
        },
        async cancel() {
          await pieces.return?.();
        },
      });
      return new Response(body, {
        headers: {
          'content-type': file.contentType,
          'content-length': String(file.size),
          'content-disposition': attachment(file.filename),
          etag: `"${file.sha256}"`,
        },
      });
    })
    .delete('/data/resources/:tenantId/:objectType/:id/files/:propertyName', async ({ request, params, set }) => {
      await cp.mutation(calls.of(request, params.tenantId), 'resources', 'deleteFile', { type: params.objectType, id: params.id, property: params.propertyName });
      set.status = 204;
    });
}
