/**
 * The storage backends, apart from the service so that the commands can offer them in their options
 * without loading the service when the client starts.
 */

export const STORAGE_BACKENDS = ['postgresql', 'documentdb', 'blob', 'search'] as const;
/** What `provision storage` accepts; `mongodb` is the platform's other name for `documentdb`. */
export const PROVISION_BACKENDS = ['postgresql', 'mongodb', 'documentdb', 'blob', 'search', 'all'] as const;
