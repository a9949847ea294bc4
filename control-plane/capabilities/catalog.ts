import type { Capability, Plan } from './capabilities.schema.ts';

const all = (limits: Capability['plans'][Plan]['limits'] = {}) => ({ included: true, limits });
const none = { included: false, limits: {} };
const GIB = 1024 * 1024 * 1024;

/**
 * What each plan includes. A capability a plan does not include is refused (403 naming it) unless
 * a platform administrator allows it for the tenant. Every plan bounds what one tenant can take of
 * shared resources (executions, storage, model calls, connections); a platform administrator raises
 * a bound for one tenant with a capability override.
 */
export const CATALOG: readonly Capability[] = [
  { key: 'workflows.runtime', description: 'Run orchestrate workflows (v3 orchestrate, v4 actions that start one).', plans: { free: all({ maxConcurrentExecutions: 5 }), team: all({ maxConcurrentExecutions: 50 }), enterprise: all({ maxConcurrentExecutions: 500 }) } },
  { key: 'data.files', description: 'Attach files to resources through declared file properties.', plans: { free: all({ maxFileBytes: 10 * 1024 * 1024 }), team: all({ maxFileBytes: 100 * 1024 * 1024 }), enterprise: all({ maxFileBytes: 100 * 1024 * 1024 }) } },
  { key: 'documents.upload', description: 'Upload documents and have their text extracted.', plans: { free: all({ maxFileBytes: 10 * 1024 * 1024 }), team: all({ maxFileBytes: 100 * 1024 * 1024 }), enterprise: all({ maxFileBytes: 100 * 1024 * 1024 }) } },
  { key: 'documents.ocr', description: 'Read the text of scanned documents and images (OCR).', plans: { free: none, team: all({ maxPagesPerDay: 500 }), enterprise: all({ maxPagesPerDay: 10_000 }) } },
  { key: 'search.fulltext', description: 'Full-text search over documents and resources.', plans: { free: all(), team: all(), enterprise: all() } },
  { key: 'search.vector', description: 'Vector and hybrid search over embeddings.', plans: { free: none, team: all(), enterprise: all() } },
  { key: 'ai.chat', description: 'Retrieval-augmented AI chat over the tenant’s documents and resources.', plans: { free: none, team: all({ maxMessagesPerDay: 2000 }), enterprise: all({ maxMessagesPerDay: 50_000 }) } },
  { key: 'storage.postgresql', description: 'Resources and object types in PostgreSQL.', plans: { free: all(), team: all(), enterprise: all() } },
  { key: 'storage.documentdb', description: 'Document collections (documentdb backend).', plans: { free: all(), team: all(), enterprise: all() } },
  {
    key: 'storage.blob',
    description: 'A blob area for files; maxStoredBytes bounds what the tenant keeps there (documents, file properties, uploads).',
    plans: { free: all({ maxStoredBytes: GIB }), team: all({ maxStoredBytes: 100 * GIB }), enterprise: all({ maxStoredBytes: 1024 * GIB }) },
  },
  { key: 'storage.search', description: 'Search projections of resources.', plans: { free: all(), team: all(), enterprise: all() } },
  { key: 'realtime', description: 'Realtime resource change events (SSE).', plans: { free: none, team: all({ maxConnections: 100 }), enterprise: all({ maxConnections: 2000 }) } },
  { key: 'webhooks', description: 'Signed inbound webhooks that start workflows.', plans: { free: none, team: all({ maxEndpoints: 10 }), enterprise: all({ maxEndpoints: 200 }) } },
  { key: 'identity.apps', description: "Register apps as OAuth clients of the platform's identity provider.", plans: { free: all({ maxClients: 5 }), team: all({ maxClients: 50 }), enterprise: all({ maxClients: 500 }) } },
  { key: 'geo', description: 'Place lookup and tenant geodata.', plans: { free: none, team: none, enterprise: all() }, regions: ['au', 'ca', 'eu'] },
];

/** The plan of a tenant none was set for whose starter template names none: the operator's `DEFAULT_PLAN`, else this one, which holds everything the API describes. */
export const DEFAULT_PLAN: Plan = 'enterprise';

/** Starter templates that come with a plan of their own. */
export const TEMPLATE_PLANS: Readonly<Record<string, Plan>> = {
  'team-vertical-template': 'team',
  'enterprise-vertical-template': 'enterprise',
};

/** The plan a tenant has when none was set for it: its starter template's, else the platform's default plan. */
export const planOfTemplate = (template: string, defaultPlan: Plan): Plan => (Object.hasOwn(TEMPLATE_PLANS, template) ? TEMPLATE_PLANS[template]! : defaultPlan);
