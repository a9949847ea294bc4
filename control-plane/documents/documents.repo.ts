import type { Tx } from '../db/client.ts';
import { isoTimestamp, NOW_MS } from '../db/sql-fragments.ts';
import { UUID } from '../ids.ts';
import type { Document, DocumentClassification, DocumentJob, DocumentStatus, JobStage, JobState, ListDocumentsInput } from './documents.schema.ts';

const DOCUMENT_COLUMNS = `d.id::text as id, d.filename, d.type, d.content_type as "contentType", d.size::float8 as size, d.sha256,
  d.storage_path as "storagePath", d.status, d.failure_reason as "failureReason", d.indexed, d.chunk_count as "chunkCount", d.pages,
  d.tags, d.metadata, d.classification,
  (select j.id::text from document_jobs j where j.document_id = d.id order by j.created_at desc, j.id limit 1) as "jobId",
  ${isoTimestamp('d.created_at')} as "createdAt", ${isoTimestamp('d.updated_at')} as "updatedAt"`;

/** A job as stored: the workflow id is derived from its document. */
export type StoredJob = Omit<DocumentJob, 'workflowId'>;

const JOB_COLUMNS = `id::text as "jobId", document_id::text as "documentId", state, stage, run_classify as "classify", run_index as "index",
  chunk_size as "chunkSize", chunk_overlap as "chunkOverlap", chunks, error,
  ${isoTimestamp('created_at')} as "createdAt", ${isoTimestamp('started_at')} as "startedAt", ${isoTimestamp('completed_at')} as "completedAt"`;

export interface NewDocument {
  id: string;
  filename: string;
  type: string;
  contentType: string;
  size: number;
  sha256: string;
  storagePath: string;
  tags: string[];
  metadata: Record<string, unknown>;
  uploadedBy: string | null;
}

export async function insertDocument(tx: Tx, document: NewDocument): Promise<void> {
  await tx.unsafe(
    `insert into documents (id, tenant_id, filename, type, content_type, size, sha256, storage_path, status, tags, metadata, uploaded_by)
     values ($1::uuid, current_tenant_id(), $2, $3, $4, $5::bigint, $6, $7, 'uploaded', $8::text[], $9::text::jsonb, $10::uuid)`,
    [
      document.id,
      document.filename,
      document.type,
      document.contentType,
      document.size,
      document.sha256,
      document.storagePath,
      document.tags,
      JSON.stringify(document.metadata),
      document.uploadedBy,
    ] as never[],
    { prepare: true },
  );
}

export async function findDocument(tx: Tx, id: string, forUpdate = false): Promise<Document | undefined> {
  if (!UUID.test(id)) return undefined;
  const rows = await tx.unsafe<Document[]>(`select ${DOCUMENT_COLUMNS} from documents d where d.id = $1::uuid${forUpdate ? ' for update' : ''}`, [id], { prepare: true });
  return rows[0];
}

export async function findDocuments(tx: Tx, ids: string[]): Promise<Array<Pick<Document, 'id' | 'filename'>>> {
  const valid = ids.filter((id) => UUID.test(id));
  if (!valid.length) return [];
  return tx.unsafe<Array<Pick<Document, 'id' | 'filename'>>>(`select id::text as id, filename from documents where id = any($1::uuid[])`, [valid] as never[], { prepare: true });
}

export async function listDocuments(tx: Tx, filter: ListDocumentsInput): Promise<{ items: Document[]; total: number }> {
  const where = `($1::text is null or d.type = $1) and ($2::text[] is null or d.tags @> $2::text[])
    and ($3::text is null or d.status = $3) and ($4::boolean is null or d.indexed = $4)`;
  const params = [filter.type ?? null, filter.tags ?? null, filter.status ?? null, filter.indexed ?? null] as never[];
  const [items, totals] = await Promise.all([
    tx.unsafe<Document[]>(`select ${DOCUMENT_COLUMNS} from documents d where ${where} order by d.created_at desc, d.id limit $5::int offset $6::int`, [
      ...params,
      filter.limit,
      filter.offset,
    ] as never[]),
    tx.unsafe<{ total: number }[]>(`select count(*)::int as total from documents d where ${where}`, params),
  ]);
  return { items, total: totals[0]!.total };
}

export async function deleteDocument(tx: Tx, id: string): Promise<boolean> {
  const rows = await tx`delete from documents where id = ${id}::uuid returning id`;
  return rows.length > 0;
}

export async function setDocumentStatus(tx: Tx, id: string, status: DocumentStatus, failureReason: string | null = null): Promise<void> {
  await tx.unsafe(`update documents set status = $2, failure_reason = $3, updated_at = ${NOW_MS} where id = $1::uuid`, [id, status, failureReason], { prepare: true });
}

export async function setClassification(tx: Tx, id: string, classification: DocumentClassification): Promise<void> {
  await tx.unsafe(`update documents set classification = $2::text::jsonb, updated_at = ${NOW_MS} where id = $1::uuid`, [id, JSON.stringify(classification)], { prepare: true });
}

/**
 * Counts `pages` pages read by OCR today (UTC) for the current tenant, only if the day's count
 * stays within `max`; false, counting nothing, when it would not.
 */
export async function meterOcrPages(tx: Tx, pages: number, max: number): Promise<boolean> {
  if (pages > max) return false;
  const rows = await tx`
    insert into document_ocr_pages (tenant_id, day, pages) values (current_tenant_id(), (now() at time zone 'UTC')::date, ${pages})
    on conflict (tenant_id, day) do update set pages = document_ocr_pages.pages + excluded.pages
      where document_ocr_pages.pages + excluded.pages <= ${max}
    returning pages`;
  return rows.length > 0;
}

export async function setPages(tx: Tx, id: string, pages: number | null): Promise<void> {
  await tx.unsafe(`update documents set pages = $2, updated_at = ${NOW_MS} where id = $1::uuid`, [id, pages] as never[], { prepare: true });
}

export async function setIndexed(tx: Tx, id: string, chunkCount: number): Promise<void> {
  await tx.unsafe(`update documents set indexed = true, chunk_count = $2, updated_at = ${NOW_MS} where id = $1::uuid`, [id, chunkCount] as never[], { prepare: true });
}

export interface NewJob {
  documentId: string;
  classify: boolean;
  index: boolean;
  chunkSize: number | null;
  chunkOverlap: number | null;
  requestedBy: string | null;
}

/** Inserts a queued job; `undefined` when the document already has an open one (the partial unique index). */
export async function insertJob(tx: Tx, job: NewJob): Promise<StoredJob | undefined> {
  const rows = await tx.unsafe<StoredJob[]>(
    `insert into document_jobs (tenant_id, document_id, run_classify, run_index, chunk_size, chunk_overlap, state, requested_by)
     values (current_tenant_id(), $1::uuid, $2, $3, $4, $5, 'queued', $6::uuid)
     on conflict (document_id) where state in ('queued', 'running') do nothing
     returning ${JOB_COLUMNS}`,
    [job.documentId, job.classify, job.index, job.chunkSize, job.chunkOverlap, job.requestedBy] as never[],
    { prepare: true },
  );
  return rows[0];
}

export async function findJob(tx: Tx, jobId: string): Promise<StoredJob | undefined> {
  if (!UUID.test(jobId)) return undefined;
  const rows = await tx.unsafe<StoredJob[]>(`select ${JOB_COLUMNS} from document_jobs where id = $1::uuid`, [jobId], { prepare: true });
  return rows[0];
}

export async function findOpenJob(tx: Tx, documentId: string): Promise<StoredJob | undefined> {
  const rows = await tx.unsafe<StoredJob[]>(`select ${JOB_COLUMNS} from document_jobs where document_id = $1::uuid and state in ('queued', 'running')`, [documentId], {
    prepare: true,
  });
  return rows[0];
}

/** Marks a queued or running job running at `stage`; `false` when it is closed (or gone). */
export async function advanceJob(tx: Tx, jobId: string, stage: JobStage | null): Promise<boolean> {
  const rows = await tx.unsafe(
    `update document_jobs set state = 'running', stage = $2, started_at = coalesce(started_at, ${NOW_MS})
     where id = $1::uuid and state in ('queued', 'running') returning id`,
    [jobId, stage],
    { prepare: true },
  );
  return rows.length > 0;
}

/** Closes an open job; a closed one is left as it is (`false`). */
export async function closeJob(tx: Tx, jobId: string, outcome: { state: Exclude<JobState, 'queued' | 'running'>; chunks?: number | null; error?: string | null }): Promise<boolean> {
  const rows = await tx.unsafe(
    `update document_jobs set state = $2, stage = null, chunks = $3, error = $4, completed_at = ${NOW_MS}
     where id = $1::uuid and state in ('queued', 'running') returning id`,
    [jobId, outcome.state, outcome.chunks ?? null, outcome.error ?? null] as never[],
    { prepare: true },
  );
  return rows.length > 0;
}
