/**
 * A tenant's storage backends, in the order provisioning ensures them. Its own module, free of
 * zod, because the provisioning workflow imports it and every workflow context evaluates its imports.
 */
export const STORAGE_BACKENDS = ['postgresql', 'documentdb', 'blob', 'search'] as const;
