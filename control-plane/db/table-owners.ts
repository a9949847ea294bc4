/**
 * Which domain owns each table the migrations create: only code in the owner's folder writes it,
 * and other domains read it through a view the owner publishes (`PUBLISHED_VIEWS`).
 * `test/architecture/table-owners.test.ts` fails when a migration creates a table missing here,
 * and `test/architecture/boundaries.test.ts` checks every domain's SQL against the map.
 * Owners are folders, relative to the repository root.
 */
export const TABLE_OWNERS = {
  tenants: 'control-plane/tenants',
  memberships: 'control-plane/tenants',
  users: 'control-plane/identity',
  roles: 'control-plane/identity',
  sessions: 'control-plane/sessions',
  object_types: 'control-plane/object-types',
  resources: 'control-plane/resources',
  resource_versions: 'control-plane/resources',
  idempotency_keys: 'control-plane/resources',
  rate_limits: 'api-edge/plugins',
  workflow_definitions: 'control-plane/orchestrate',
  executions: 'control-plane/orchestrate',
  workflow_runtime_requests: 'control-plane/runtime',
  tenant_storage: 'control-plane/storage',
  tenant_storage_indexes: 'control-plane/storage',
  docstore_collections: 'control-plane/storage',
  docstore_documents: 'control-plane/storage',
  search_projections: 'control-plane/storage',
  declarations: 'control-plane/declarations',
  capability_overrides: 'control-plane/capabilities',
  tenant_storage_usage: 'control-plane/capabilities',
  tenant_storage_reservations: 'control-plane/capabilities',
  documents: 'control-plane/documents',
  document_jobs: 'control-plane/documents',
  document_ocr_pages: 'control-plane/documents',
  search_chunks: 'control-plane/search',
  search_postings: 'control-plane/search',
  search_term_stats: 'control-plane/search',
  search_tenant_stats: 'control-plane/search',
  chat_conversations: 'control-plane/chat',
  chat_messages: 'control-plane/chat',
  chat_events: 'control-plane/chat',
  chat_streams: 'control-plane/chat',
  chat_daily_usage: 'control-plane/chat',
  chat_step_charges: 'control-plane/chat',
  chat_followers: 'control-plane/chat',
  idp_apps: 'control-plane/idp-apps',
  idp_app_registrations: 'control-plane/idp-apps',
  realtime_streams: 'control-plane/realtime',
  realtime_events: 'control-plane/realtime',
  realtime_deliveries: 'control-plane/realtime',
  realtime_signing_keys: 'control-plane/realtime',
  realtime_tickets: 'control-plane/realtime',
  webhook_endpoints: 'control-plane/webhooks',
  webhook_deliveries: 'control-plane/webhooks',
  webhook_refusal_counts: 'control-plane/webhooks',
  geo_datasets: 'control-plane/geo',
  geo_features: 'control-plane/geo',
  config_entries: 'control-plane/config-store',
  config_audit: 'control-plane/config-store',
  workflow_outbox: 'control-plane/outbox',
  scheduled_sweeps: 'control-plane/sweeps',
} as const satisfies Record<string, string>;

/**
 * Views an owner publishes for other domains to read (migration 0033): read-only, with the row-level
 * security of the table beneath (`security_invoker`), and only the columns others may rely on.
 */
export const PUBLISHED_VIEWS = {
  tenant_directory: 'control-plane/tenants',
  tenant_members: 'control-plane/tenants',
  user_directory: 'control-plane/identity',
  tenant_roles: 'control-plane/identity',
  object_type_catalog: 'control-plane/object-types',
  resource_rows: 'control-plane/resources',
} as const satisfies Record<string, string>;

export type TableName = keyof typeof TABLE_OWNERS;
