import type { Actor } from '../identity/identity.schema.ts';
import type { Tx } from '../db/client.ts';
import { ConflictError, DomainError, NotFoundError } from '../errors.ts';
import { INDEX_DOCUMENT } from '../temporal/workflow-contract.ts';
import type { DocumentFiles, DocumentsDeps } from './document-files.ts';
import { findJob, findOpenJob, insertJob, type StoredJob } from './documents.repo.ts';
import type { DocumentJob, DocumentJobPlan, IndexOutcome } from './documents.schema.ts';

const INDEX_WAIT_MS = 25_000;

/**
 * A document's processing jobs as callers start and read them: one Temporal workflow per document
 * (`document-<id>-index`), recorded first, at most one open at a time (409 otherwise).
 */
export function createDocumentJobStarts(deps: DocumentsDeps, files: DocumentFiles) {
  const { db } = deps;
  const { requireDocument, requireReadable, searchIndex, workflows } = files;

  const withWorkflow = (job: StoredJob): DocumentJob => ({ ...job, workflowId: INDEX_DOCUMENT.workflowId(job.documentId) });

  const outbox = () => {
    if (!deps.outbox) throw new DomainError('INTERNAL_ERROR', 'the workflow engine is not configured');
    return deps.outbox;
  };

  /** Writes the start of the job's workflow in the job's transaction `tx`: the workflow outbox starts it once `tx` has committed. */
  function queueJob(tx: Tx, tenantId: string, job: DocumentJob, chunking: { chunkSize: number; chunkOverlap: number }): Promise<string> {
    const plan: DocumentJobPlan = { tenantId, documentId: job.documentId, jobId: job.jobId, classify: job.classify, index: job.index, ...chunking };
    return outbox().enqueue(tx, { workflowType: INDEX_DOCUMENT.type, workflowId: job.workflowId, workflowKey: INDEX_DOCUMENT.key, args: [plan], reusesId: true });
  }

  /**
   * Records a job for the document in `tx` and writes its workflow start there; undefined while
   * another job of the document is open. The caller dispatches `start` once `tx` has committed.
   */
  async function recordJob(
    tx: Tx,
    actor: Actor,
    request: { documentId: string; classify: boolean; index: boolean; chunkSize: number; chunkOverlap: number },
  ): Promise<{ job: DocumentJob; start: string } | undefined> {
    const inserted = await insertJob(tx, {
      documentId: request.documentId,
      classify: request.classify,
      index: request.index,
      chunkSize: request.index ? request.chunkSize : null,
      chunkOverlap: request.index ? request.chunkOverlap : null,
      requestedBy: actor.userId || null,
    });
    if (!inserted) return undefined;
    const job = withWorkflow(inserted);
    return { job, start: await queueJob(tx, actor.tenantId, job, request) };
  }

  /** Records a job for the document and starts it; 409 while another job of the document is open. */
  async function submitJob(
    actor: Actor,
    request: { documentId: string; classify: boolean; index: boolean; chunkSize: number; chunkOverlap: number },
  ): Promise<DocumentJob> {
    const document = await requireDocument(actor.tenantId, request.documentId);
    await requireReadable(actor.tenantId, document.contentType);
    if (request.index) searchIndex();
    workflows();
    const { job, start } = await db.inTenant(actor.tenantId, async (tx) => {
      const recorded = await recordJob(tx, actor, { ...request, documentId: document.id });
      if (recorded) return recorded;
      const open = await findOpenJob(tx, document.id);
      throw new ConflictError('the document is being processed by another job', { jobId: open?.jobId });
    });
    await outbox().dispatch(start);
    return job;
  }

  async function getJob(actor: Actor, jobId: string): Promise<DocumentJob> {
    const job = await db.inTenant(actor.tenantId, (tx) => findJob(tx, jobId));
    if (!job) throw new NotFoundError('job');
    return withWorkflow(job);
  }

  return {
    withWorkflow,
    recordJob,
    dispatch: (start: string) => outbox().dispatch(start),
    submitJob,

    /**
     * v3 index: starts an indexing job and waits a bounded time for it. `indexed` with the chunk
     * count when it finished, `failed` with its reason, else `processing` (the job goes on).
     */
    async index(actor: Actor, input: { id: string; chunkSize: number; chunkOverlap: number }): Promise<IndexOutcome> {
      const job = await submitJob(actor, { documentId: input.id, classify: false, index: true, chunkSize: input.chunkSize, chunkOverlap: input.chunkOverlap });
      await workflows().waitForClose(job.workflowId, deps.indexWaitMs ?? INDEX_WAIT_MS);
      const current = await getJob(actor, job.jobId);
      if (current.state === 'completed') return { documentId: current.documentId, chunks: current.chunks ?? 0, status: 'indexed', jobId: current.jobId };
      if (current.state === 'failed' || current.state === 'cancelled') {
        return { documentId: current.documentId, chunks: 0, status: 'failed', jobId: current.jobId, error: current.error ?? current.state };
      }
      return { documentId: current.documentId, chunks: 0, status: 'processing', jobId: current.jobId };
    },

    /** v4 rag-index: starts an indexing job and answers at once. */
    submitIndexJob: (actor: Actor, input: { documentId: string; chunkSize: number; chunkOverlap: number }) =>
      submitJob(actor, { ...input, classify: false, index: true }),

    job: getJob,

  };
}
