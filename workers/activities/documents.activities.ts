import { ApplicationFailure, Context } from '@temporalio/activity';
import type { DocumentJobs } from '../../control-plane/contracts.ts';

/** How often a document step tells Temporal it is alive; its heartbeat timeout is a few times this. */
export const DOCUMENT_HEARTBEAT_MS = 5_000;

/**
 * Runs a document step, heartbeating while it runs: extraction, OCR and embedding can take
 * minutes, and a worker that went away is noticed at the heartbeat timeout, not at the step's
 * long start-to-close timeout. A domain error (an unreadable file, a deleted document, a capability
 * the tenant lacks) fails the step for good: retrying would give the same answer. A model that
 * failed (BAD_GATEWAY) may answer later, so that step is retried.
 */
async function step<T>(run: () => Promise<T>): Promise<T> {
  const context = Context.current();
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), DOCUMENT_HEARTBEAT_MS);
  try {
    return await run();
  } catch (error) {
    const domain = error as { code?: unknown; toBody?: unknown; message?: string };
    if (typeof domain?.toBody === 'function' && typeof domain.code === 'string') {
      throw ApplicationFailure.create({ message: domain.message ?? domain.code, type: domain.code, nonRetryable: domain.code !== 'BAD_GATEWAY' && domain.code !== 'SERVICE_UNAVAILABLE', cause: error as Error });
    }
    throw error;
  } finally {
    clearInterval(timer);
  }
}

type Ref = Parameters<DocumentJobs['beginJob']>[0];

/** The steps of a document job, as activities over the documents' job steps. */
export function createDocumentsActivities(deps: { documents: DocumentJobs }) {
  const { documents } = deps;
  return {
    beginDocumentJob: (ref: Ref) => documents.beginJob(ref),
    extractDocumentText: (ref: Ref) => step(() => documents.extractText(ref)),
    classifyDocumentText: (ref: Ref) => step(() => documents.classifyText(ref)),
    chunkDocumentText: (ref: Ref, options: Parameters<DocumentJobs['chunkText']>[1]) => step(() => documents.chunkText(ref, options)),
    storeDocumentChunks: (ref: Ref) => step(() => documents.storeChunks(ref)),
    finishDocumentJob: (ref: Ref, outcome: Parameters<DocumentJobs['finishJob']>[1]) => documents.finishJob(ref, outcome),
    failDocumentJob: (ref: Ref, outcome: Parameters<DocumentJobs['failJob']>[1]) => documents.failJob(ref, outcome),
  };
}
