import type { Answer, RequestBody, Schemas } from '../api/wire.ts';
import type { ApiClient } from './api-client.ts';

/** A v4 resource, as the platform returns it. */
export type Resource = Schemas['Resource'];
export type ResourcePage = Answer<'listTenantResources'>;
/** A cross-type query's answer. */
export type QueryAnswer = Answer<'queryTenantResources'>;
/** Summary rows: each group-by field and each metric by name. */
export type AggregateAnswer = Answer<'aggregateTenantResources'>;
export type SearchAnswer = Answer<'searchTenantResources'>;
/** A batch's answer: the resources it created or replaced, or how many it deleted. */
export type BatchAnswer = Answer<'batchCreateResources'> | Answer<'batchUpdateResources'> | Answer<'batchDeleteResources'>;

export interface ListOptions {
  page?: number;
  limit?: number;
  sort?: string;
  where?: unknown;
  cursor?: string;
}

const seg = encodeURIComponent;
const base = (tenantId: string) => `/v4/data/resources/${seg(tenantId)}`;
const one = (tenantId: string, type: string, id: string) => `${base(tenantId)}/${seg(type)}/${seg(id)}`;

/**
 * Resources of a tenant over v4: each function is one documented call (update two: the version
 * read when none is given, then the PUT) and returns the platform's answer as it came.
 */
export function createResourcesService(api: ApiClient) {
  return {
    async list(tenantId: string, type: string, options: ListOptions): Promise<ResourcePage> {
      const query = {
        // A cursor carries its own position; the platform refuses one with a page.
        page: options.cursor === undefined ? options.page : undefined,
        limit: options.limit,
        sort: options.sort,
        where: options.where === undefined ? undefined : JSON.stringify(options.where),
        cursor: options.cursor,
      };
      return (await api.request<ResourcePage>('GET', `${base(tenantId)}/${seg(type)}`, { query, subject: `Object type ${type}` })).body;
    },

    async get(tenantId: string, type: string, id: string): Promise<Resource> {
      return (await api.request<Resource>('GET', one(tenantId, type, id), { subject: `${type} ${id}` })).body;
    },

    async create(tenantId: string, type: string, data: unknown): Promise<Resource> {
      return (await api.request<Resource>('POST', `${base(tenantId)}/${seg(type)}`, { body: { data }, subject: `Object type ${type}` })).body;
    },

    /** Replaces the data at `version`, or at the stored version when none is given (read first). */
    async update(tenantId: string, type: string, id: string, data: unknown, version?: number): Promise<Resource> {
      const at = version ?? (await this.get(tenantId, type, id)).version;
      return (await api.request<Resource>('PUT', one(tenantId, type, id), { body: { data, version: at }, subject: `${type} ${id}` })).body;
    },

    async delete(tenantId: string, type: string, id: string): Promise<{ id: string; type: string; deleted: true }> {
      await api.request('DELETE', one(tenantId, type, id), { subject: `${type} ${id}` });
      return { id, type, deleted: true };
    },

    /** `where` is the caller's JSON, passed on for the platform to check. */
    async query(tenantId: string, input: Omit<RequestBody<'queryTenantResources'>, 'where'> & { where?: unknown }): Promise<QueryAnswer> {
      return (await api.request<QueryAnswer>('POST', `${base(tenantId)}/query`, { body: input })).body;
    },

    /** `metrics` and `where` are the caller's JSON, passed on for the platform to check. */
    async aggregate(tenantId: string, type: string, input: Omit<RequestBody<'aggregateTenantResources'>, 'metrics' | 'where'> & { metrics: unknown; where?: unknown }): Promise<AggregateAnswer> {
      return (await api.request<AggregateAnswer>('POST', `${base(tenantId)}/${seg(type)}/aggregate`, { body: input, subject: `Object type ${type}` })).body;
    },

    async search(tenantId: string, input: RequestBody<'searchTenantResources'>): Promise<SearchAnswer> {
      return (await api.request<SearchAnswer>('POST', `${base(tenantId)}/search`, { body: input })).body;
    },

    /** `POST .../{type}/batch/create|update|delete`: all items or none; the platform's answer as it came. */
    async batch(tenantId: string, type: string, operation: 'create' | 'update' | 'delete', body: unknown): Promise<BatchAnswer> {
      return (await api.request<BatchAnswer>('POST', `${base(tenantId)}/${seg(type)}/batch/${operation}`, { body, subject: `Object type ${type}` })).body;
    },

    /** Streams a file into a file property of a resource (`?filename=`, the file's bytes as the body). */
    async uploadFile(
      tenantId: string,
      file: { type: string; id: string; property: string; filename: string; contentType: string; size: number; body: ReadableStream<Uint8Array> },
    ): Promise<Resource> {
      const path = `${one(tenantId, file.type, file.id)}/files/${seg(file.property)}`;
      const raw = { body: file.body, contentType: file.contentType, length: file.size };
      return (await api.request<Resource>('POST', path, { query: { filename: file.filename }, raw, subject: `${file.type} ${file.id}` })).body;
    },

    /** A stored file's bytes with its name and content type, from the answer's headers. */
    async downloadFile(tenantId: string, type: string, id: string, property: string): Promise<{ bytes: Uint8Array; contentType: string; filename: string | undefined }> {
      const answer = await api.request<Uint8Array>('GET', `${one(tenantId, type, id)}/files/${seg(property)}`, { response: 'bytes', subject: `${type} ${id} file ${property}` });
      const disposition = answer.headers['content-disposition'] ?? '';
      const encoded = /filename\*=UTF-8''([^;]+)/i.exec(disposition)?.[1];
      const filename = encoded ? decodeURIComponent(encoded) : /filename="([^"]*)"/i.exec(disposition)?.[1];
      return { bytes: answer.body, contentType: answer.headers['content-type'] ?? 'application/octet-stream', filename };
    },

    async deleteFile(tenantId: string, type: string, id: string, property: string): Promise<{ id: string; type: string; property: string; deleted: true }> {
      await api.request('DELETE', `${one(tenantId, type, id)}/files/${seg(property)}`, { subject: `${type} ${id} file ${property}` });
      return { id, type, property, deleted: true };
    },

    async schema(tenantId: string): Promise<Answer<'listPublishedObjectTypes'>> {
      return (await api.request<Answer<'listPublishedObjectTypes'>>('GET', `/v4/data/resources/schema/${seg(tenantId)}`, { subject: `Tenant ${tenantId}` })).body;
    },
  };
}
