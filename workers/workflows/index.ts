/** Every workflow the platform's worker runs; the worker bundles this module. */
export { runExecution } from './run-execution.workflow.ts';
export { provisionTenant } from './provision-tenant.workflow.ts';
export { provisionStorage } from './provision-storage.workflow.ts';
export { indexDocument } from './index-document.workflow.ts';
