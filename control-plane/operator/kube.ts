import { delimiter } from 'node:path';
import { ApiException, CoordinationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions, type RequestContext } from '@kubernetes/client-node';

export const GROUP = 'platform.svc.dev';
export const VERSION = 'v1alpha1';
export const TENANTS = 'tenants';
export const TENANT_FINALIZER = 'platform.svc.dev/tenant-cleanup';
export const APPS = 'apps';
export const APP_FINALIZER = 'platform.svc.dev/app-cleanup';
export const FIELD_MANAGER = 'svc-platform-operator';

/** The Kubernetes APIs the operator uses, from one kubeconfig. */
export interface Kube {
  custom: CustomObjectsApi;
  core: CoreV1Api;
  coordination: CoordinationV1Api;
}

export function kubeFromConfig(config: KubeConfig): Kube {
  return {
    custom: config.makeApiClient(CustomObjectsApi),
    core: config.makeApiClient(CoreV1Api),
    coordination: config.makeApiClient(CoordinationV1Api),
  };
}

/**
 * A KubeConfig whose API calls share one connection pool per cluster and user. client-node 2.0
 * gives every request a new undici Agent, so no connection is reused and every call pays a TLS
 * handshake on both sides: at a few hundred calls per second that is most of the operator's and
 * the API server's CPU.
 */
class PooledKubeConfig extends KubeConfig {
  private readonly dispatchers = new Map<string, ReturnType<RequestContext['getDispatcher']>>();

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const key = JSON.stringify([this.getCurrentCluster()?.name, this.getCurrentUser()?.name]);
    const shared = this.dispatchers.get(key);
    if (shared) context.setDispatcher(shared);
    else this.dispatchers.set(key, context.getDispatcher());
  }
}

/**
 * Loads a kubeconfig file, or several listed as in `KUBECONFIG` (merged, the first one's current
 * context winning), or the in-cluster service account when `path` is omitted.
 */
export function loadKubeConfig(path?: string): KubeConfig {
  const config = new PooledKubeConfig();
  const [first, ...more] = (path ?? '').split(delimiter).filter(Boolean);
  if (!first) {
    config.loadFromDefault();
    return config;
  }
  config.loadFromFile(first);
  for (const file of more) {
    const next = new KubeConfig();
    next.loadFromFile(file);
    config.mergeConfig(next, true);
  }
  return config;
}

/**
 * What the operator has ensured since its last resync (a Namespace, a Secret's contents), by
 * object: a step that finds its object here with the same value sends nothing. The operator
 * clears it at every resync, so everything is checked against the API server again then.
 */
export type Ensured = Map<string, string>;

export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export const statusOf = (error: unknown): number | undefined => (error instanceof ApiException ? error.code : undefined);

/** Runs `create` and treats "already exists" as success: ensure-steps stay idempotent under races. */
export async function createIfAbsent(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (error) {
    if (statusOf(error) !== 409) throw error;
  }
}
