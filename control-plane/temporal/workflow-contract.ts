/**
 * What the control plane, the workers, the stack scripts and the tests agree on about the
 * platform's workflows: their type names, their ids, the task queue, the search attributes they
 * carry and the patch markers recorded in their histories. Workflow code imports this module, so it
 * stays pure and deterministic: no imports but `@temporalio/common`'s search-attribute keys (which
 * the workflow sandbox allows). Every value here is recorded by running or finished workflows, so
 * changing one is a migration, not a refactoring.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** The task queue the worker polls and the control plane starts workflows on, unless `TEMPORAL_TASK_QUEUE` names another. */
export const DEFAULT_TASK_QUEUE = 'svc-platform';

/** The tenant a run works for: every platform workflow carries it. */
export const TENANT_ID = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);
/** What a run does (`tenant-provision`, `provision-storage`, an orchestrate workflow's id): every platform workflow carries it. */
export const WORKFLOW_KEY = defineSearchAttributeKey('WorkflowKey', SearchAttributeType.KEYWORD);
/** Every custom search attribute the platform's namespace must have registered. */
export const PLATFORM_SEARCH_ATTRIBUTE_KEYS = [TENANT_ID, WORKFLOW_KEY] as const;

/** Provisions a tenant: default roles, example workflows, storage, then `active`. */
export const PROVISION_TENANT = {
  type: 'provisionTenant',
  workflowId: (tenantId: string) => `tenant-${tenantId}-provision`,
  key: 'tenant-provision',
  /** Histories recorded before the steps ran as local activities lack this marker. */
  localStepsPatch: 'provision-tenant-local-steps',
} as const;

/** Provisions a tenant's storage backends: started by the storage routes, or (in runs of earlier versions) as a child of `provisionTenant`. */
export const PROVISION_STORAGE = {
  type: 'provisionStorage',
  workflowId: (tenantId: string) => `tenant-${tenantId}-storage`,
  key: 'provision-storage',
  /** The `WorkflowKey` of the run when `provisionTenant` starts it as its child. */
  childKey: 'tenant-storage',
  /** Histories recorded before a new tenant's storage steps ran as local activities lack this marker. */
  localStepsPatch: 'provision-storage-local-steps',
  /** Histories recorded before cancelled backend steps were waited for lack this marker. */
  waitForCancelledStepsPatch: 'provision-storage-wait-for-cancelled-steps',
} as const;

/** Runs a v3 orchestrate execution; its `WorkflowKey` is the orchestrate workflow's id. */
export const RUN_EXECUTION = {
  type: 'runExecution',
  workflowId: (executionId: string) => `exec-${executionId}`,
} as const;

/** Processes one document (extract, classify, chunk, embed and store); one run at a time per document, a later job reusing the id. */
export const INDEX_DOCUMENT = {
  type: 'indexDocument',
  workflowId: (documentId: string) => `document-${documentId}-index`,
  key: 'document-index',
} as const;

/** Every workflow type the worker registers (the exports of `workers/workflows/index.ts`). */
export type WorkflowType = (typeof PROVISION_TENANT | typeof PROVISION_STORAGE | typeof RUN_EXECUTION | typeof INDEX_DOCUMENT)['type'];

/**
 * The header with which a run's activities get the trace of the call that started the run (the
 * `{requestId, traceparent}` of its memo), for their context and their log lines.
 */
export const TRACE_HEADER = 'svc-trace';
