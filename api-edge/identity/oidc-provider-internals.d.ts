/** The internal modules of `oidc-provider` (typed by no package) that the development provider loads. */
declare module 'oidc-provider/lib/helpers/als.js' {
  /** The AsyncLocalStorage holding each request's context, where this oidc-provider version keeps it. */
  const storage: unknown;
  export default storage;
}

declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  /** The in-memory adapter factory: one adapter per model name. */
  export function createMemoryAdapter(clockTolerance: number): (model: string) => unknown;
}
