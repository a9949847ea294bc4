import { ResourceSchema, untrusted, UploadMetaSchema } from '../../../control-plane/contracts.ts';
import { fileResponse } from '../file-download.ts';
import { filePath, param } from '../params.ts';
import { queryValue } from '../request-input.ts';
import { defineRoute, NIL_ID } from '../route.ts';

/**
 * v4 file properties of a resource: an upload is the request's body (`application/octet-stream`,
 * `?filename=`), streamed to the control plane unread here; a download streams the stored bytes
 * back with the file's type and name.
 */
export const v4ResourceFileRoutes = [
  defineRoute({
    method: 'POST',
    path: '/data/resources/:tenantId/:objectType/:id/files/:propertyName',
    procedure: 'resources.uploadFile',
    tenant: 'path',
    rateLimit: 'resources',
    input: {
      path: filePath,
      query: { filename: param(UploadMetaSchema.shape.filename, { required: true }) },
      body: { binary: true, description: "The file's bytes" },
    },
    output: { 200: { description: 'The resource, describing the file in its data', schema: ResourceSchema } },
    docs: {
      operationId: 'uploadResourceFile',
      summary: "Upload a resource's file",
      tag: 'Files',
      description: "The body is the file. Its type is judged by its content against the property's declared types; the resource gets a new version. A file that would pass the tenant's storage quota (storage.blob `maxStoredBytes`) is 413, by its Content-Length before it is read.",
      errors: [409, 415],
    },
    sample: { params: { objectType: 'project', id: NIL_ID, propertyName: 'attachment' }, query: 'filename=case.txt' },
    // The body is the file: Elysia must not read it.
    parse: 'none',
    handler: async ({ request, params, set, call, procedure }) => {
      const ref = { type: params.objectType, id: params.id, property: params.propertyName };
      const filename = queryValue(new URL(request.url).searchParams, 'filename');
      const contentType = request.headers.get('content-type') ?? 'application/octet-stream';
      const length = request.headers.get('content-length');
      const declaredBytes = length !== null && /^\d+$/.test(length) ? Number(length) : undefined;
      // No body is an empty file.
      const stream = request.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
      try {
        return await procedure.upload(call(params.tenantId), { stream, meta: untrusted({ ...ref, filename, contentType, declaredBytes }) });
      } catch (error) {
        // A refused upload may leave its body unread: the connection closes, so that the client does not send the rest into the next request.
        set.headers.connection = 'close';
        throw error;
      }
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/data/resources/:tenantId/:objectType/:id/files/:propertyName',
    procedure: 'resources.readFile',
    tenant: 'path',
    rateLimit: 'resources',
    input: { path: filePath },
    output: { 200: { description: "The file, with its media type, size and name (Content-Disposition)", binary: true } },
    docs: { operationId: 'downloadResourceFile', summary: "Download a resource's file", tag: 'Files' },
    sample: { params: { objectType: 'project', id: NIL_ID, propertyName: 'attachment' } },
    handler: async ({ request, params, call, procedure }) => {
      const ref = { type: params.objectType, id: params.id, property: params.propertyName };
      return fileResponse(procedure.subscription(call(params.tenantId), ref, { signal: request.signal }));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/data/resources/:tenantId/:objectType/:id/files/:propertyName',
    procedure: 'resources.deleteFile',
    tenant: 'path',
    rateLimit: 'resources',
    input: { path: filePath },
    output: { 204: { description: 'Removed' } },
    docs: { operationId: 'deleteResourceFile', summary: "Remove a resource's file", tag: 'Files', errors: [409] },
    sample: { params: { objectType: 'project', id: NIL_ID, propertyName: 'attachment' } },
    handler: async ({ params, set, call, procedure }) => {
      await procedure.mutation(call(params.tenantId), { type: params.objectType, id: params.id, property: params.propertyName });
      set.status = 204;
    },
  }),
];
