import { ApiException, CoordinationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

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

/** Loads a kubeconfig file, or the in-cluster service account when `path` is omitted. */
export function loadKubeConfig(path?: string): KubeConfig {
  const config = new KubeConfig();
  if (path) config.loadFromFile(path);
  else config.loadFromDefault();
  return config;
}

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
