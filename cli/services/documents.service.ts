import { randomBytes } from 'node:crypto';
import type { ApiClient } from './api-client.ts';

/** A document's record, as the platform keeps it. */
export interface DocumentRecord {
  id: string;
  filename: string;
  contentType?: string;
  size?: number;
  status: string;
  storagePath?: string;
  classification?: { category: string; confidence: number; [field: string]: unknown } | null;
  indexed?: boolean;
  chunkCount?: number;
  jobId?: string | null;
  [field: string]: unknown;
}

/** An indexing job (`rag-index`) and how far it got. */
export interface IndexJob {
  jobId: string;
  documentId: string;
  state: string;
  stage?: string | null;
  chunks?: number | null;
  error?: string | null;
  [field: string]: unknown;
}

/** How the platform processes an upload: `full` classifies and indexes, `classification` only classifies. */
export type ProcessingMode = 'full' | 'classification';

export interface UploadFile {
  filename: string;
  size: number;
  /** The file's bytes, read as they are sent. */
  body: ReadableStream<Uint8Array>;
}

const JOB_ENDS = new Set(['completed', 'failed', 'cancelled']);

/** `filename="..."` as browsers write it (quotes and line breaks escaped), with `filename*` in UTF-8 for a name that is not ASCII. */
function filenameParams(name: string): string {
  const plain = name.replace(/[\r\n]/g, ' ').replace(/"/g, '%22');
  if (/^[\x20-\x7e]*$/.test(plain)) return `filename="${plain}"`;
  const fallback = plain.replace(/[^\x20-\x7e]/g, '_');
  return `filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/**
 * A `multipart/form-data` body streamed as the file is read, with its exact length: the text fields
 * first (`tenant_id` must come before the files), then the file under `files`.
 */
export function multipartBody(fields: Array<[string, string]>, file: UploadFile): { body: ReadableStream<Uint8Array>; contentType: string; length: number } {
  const boundary = `svc-${randomBytes(16).toString('hex')}`;
  const encoder = new TextEncoder();
  const head = encoder.encode(
    fields.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('') +
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; ${filenameParams(file.filename)}\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  const reader = file.body.getReader();
  let stage: 'head' | 'file' | 'tail' | 'end' = 'head';
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (stage === 'head') {
        stage = 'file';
        controller.enqueue(head);
        return;
      }
      if (stage === 'file') {
        const next = await reader.read();
        if (!next.done) return controller.enqueue(next.value);
        stage = 'tail';
      }
      if (stage === 'tail') {
        stage = 'end';
        controller.enqueue(tail);
        return;
      }
      controller.close();
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { body, contentType: `multipart/form-data; boundary=${boundary}`, length: head.length + file.size + tail.length };
}

/**
 * Documents over v4: uploads (`processing_mode=full`, classified and indexed by a job) and
 * classification (`processing_mode=classification`) of a file sent as it is read, a document's
 * record, and its indexing job (`rag-index`).
 */
export function createDocumentsService(api: ApiClient) {
  return {
    async upload(tenantId: string, mode: ProcessingMode, file: UploadFile): Promise<{ data: DocumentRecord[] }> {
      const form = multipartBody(
        [
          ['tenant_id', tenantId],
          ['processing_mode', mode],
        ],
        file,
      );
      const path = mode === 'full' ? '/v4/data/documents/upload' : '/v4/data/documents/classify';
      return (await api.request<{ data: DocumentRecord[] }>('POST', path, { raw: form, subject: `Tenant ${tenantId}` })).body;
    },

    async record(tenantId: string, documentId: string): Promise<DocumentRecord> {
      const path = `/v4/data/documents/records/${encodeURIComponent(documentId)}`;
      return (await api.request<DocumentRecord>('GET', path, { query: { tenant_id: tenantId }, subject: `Document ${documentId}` })).body;
    },

    /**
     * Submits an indexing job, naming the document `document_id` and the tenant `tenant_id`, as v4
     * requests name their fields.
     */
    async index(tenantId: string, documentId: string): Promise<IndexJob> {
      return (await api.request<IndexJob>('POST', '/v4/data/documents/rag-index', { body: { tenant_id: tenantId, document_id: documentId }, subject: `Document ${documentId}` })).body;
    },

    async job(tenantId: string, jobId: string): Promise<IndexJob> {
      const path = `/v4/data/documents/rag-index/${encodeURIComponent(jobId)}`;
      return (await api.request<IndexJob>('GET', path, { query: { tenant_id: tenantId }, subject: `Indexing job ${jobId}` })).body;
    },

    /** The job, read every `intervalMs` until it has ended (completed, failed or cancelled) or `timeoutMs` has passed. */
    async waitForJob(tenantId: string, jobId: string, options: { intervalMs?: number; timeoutMs: number }): Promise<{ job: IndexJob; ended: boolean }> {
      const deadline = Date.now() + options.timeoutMs;
      for (;;) {
        const job = await this.job(tenantId, jobId);
        if (JOB_ENDS.has(job.state)) return { job, ended: true };
        if (Date.now() >= deadline) return { job, ended: false };
        await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 1000));
      }
    },
  };
}
