/**
 * The names and vocabularies of workflow provisioning, apart from the service so that the commands can offer them in their options
 * without loading the service when the client starts.
 */

/** The platform's built-in configuration types that provisioning writes (and chat reads). */
export const WORKFLOW_CONFIG_TYPE = 'shared-workflow-config';
export const PRODUCT_CONFIG_TYPE = 'vertical-product-config';
export const AI_PROFILE_TYPE = 'shared-ai-profile';
export const CHATBOT_CONFIG_TYPE = 'shared-chatbot-config';

/** The provider a bound AI profile names unless `--ai-provider` says: the platform's own answerer, which runs everywhere. */
export const DEFAULT_AI_PROVIDER = 'local';

export const WORKFLOW_STATUSES = ['active', 'draft'] as const;
export type ProvisionStatus = (typeof WORKFLOW_STATUSES)[number];

/** The runtime statuses of document 2. */
export const RUNTIME_STATUSES = ['available', 'operator_required', 'paid_upgrade_required', 'rate_limited', 'blocked', 'unsupported'] as const;
