/**
 * A tenant's storage backends, in the order provisioning ensures them. Its own module, free of
 * zod, because the provisioning workflow imports it and every workflow context evaluates its imports.
 */
export const STORAGE_BACKENDS = ['postgresql', 'documentdb', 'blob', 'search'] as const;

export type StorageBackendName = (typeof STORAGE_BACKENDS)[number];

/**
 * The backends a list names, in provisioning order and once each: `mongodb` is `documentdb`,
 * `all` (or no list) is every backend; other names are not backends and are left out.
 */
export function namedBackends(names: readonly string[] | undefined): StorageBackendName[] {
  if (!names || names.includes('all')) return [...STORAGE_BACKENDS];
  const wanted = new Set(names.map((name) => (name === 'mongodb' ? 'documentdb' : name)));
  return STORAGE_BACKENDS.filter((backend) => wanted.has(backend));
}
