import { CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { DocumentJobPlan } from '../../control-plane/documents/documents.schema.ts';
import type { Activities } from '../activities/index.ts';

// One statement each: a lost one is retried after seconds.
const { beginDocumentJob, finishDocumentJob, failDocumentJob } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 10, initialInterval: '1 second' },
});

// Long steps heartbeat every 5 s (workers/activities/documents.activities.ts): a worker that dies
// is noticed within the heartbeat timeout, so its step runs again elsewhere seconds later. Parsers
// and the offline embedding model run on threads of their own, so the worker's event loop stays
// free to heartbeat while they work.
const { extractDocumentText, classifyDocumentText, chunkDocumentText, storeDocumentChunks } = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { maximumAttempts: 10, initialInterval: '1 second' },
});

/** The innermost message of a failure: what the step reported. */
function reasonOf(error: unknown): string {
  let current = error as { message?: string; cause?: unknown } | undefined;
  while (current?.cause && typeof current.cause === 'object') current = current.cause;
  return current?.message ?? String(error);
}

/**
 * Processes one document for one job: extract its text, classify it, cut it into chunks, embed and
 * store them. Every step is idempotent, so a step retried after its worker died leaves the same
 * state as one run: the chunks of the document are replaced, never added to. The job and the
 * document end `completed`/`ready`, or `failed` (or cancelled) with the reason.
 */
export async function indexDocument(plan: DocumentJobPlan): Promise<{ chunks: number | null }> {
  const ref = { tenantId: plan.tenantId, documentId: plan.documentId, jobId: plan.jobId };
  try {
    if (!(await beginDocumentJob(ref))) return { chunks: null };
    await extractDocumentText(ref);
    if (plan.classify) await classifyDocumentText(ref);
    let chunks: number | null = null;
    if (plan.index) {
      await chunkDocumentText(ref, { chunkSize: plan.chunkSize, chunkOverlap: plan.chunkOverlap });
      chunks = (await storeDocumentChunks(ref)).chunks;
    }
    await finishDocumentJob(ref, { chunks });
    return { chunks };
  } catch (error) {
    const cancelled = isCancellation(error);
    await CancellationScope.nonCancellable(() => failDocumentJob(ref, { cancelled, reason: cancelled ? 'the job was cancelled' : reasonOf(error) }));
    throw error;
  }
}
