import { randomUUID } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import type { AppsDeclared } from '../apps/apps.declared.ts';
import type { StorageDeclared } from '../storage/storage.declared.ts';
import type { TenantsDeclared } from '../tenants/tenants.declared.ts';
import { kubeFromConfig, type Ensured } from './kube.ts';
import { appKind } from './reconcile-app.ts';
import { tenantKind } from './reconcile-tenant.ts';
import { startController, type RunningController } from './runtime/controller.ts';
import { eventRecorder } from './runtime/event-recorder.ts';

/** The functions the operator calls of each domain's `.declared.ts` interface; the composition root gives it these and no others. */
export const OPERATOR_FUNCTIONS = {
  tenants: ['declare', 'removeDeclared', 'find', 'onStatusChange'],
  apps: ['declare', 'removeDeclared'],
  storage: ['readiness', 'startProvisioning'],
} as const satisfies { tenants: readonly (keyof TenantsDeclared)[]; apps: readonly (keyof AppsDeclared)[]; storage: readonly (keyof StorageDeclared)[] };

/** What the operator calls on the platform: only these functions of the domains' declared interfaces. */
export interface OperatorServices {
  tenants: Pick<TenantsDeclared, (typeof OPERATOR_FUNCTIONS.tenants)[number]>;
  apps: Pick<AppsDeclared, (typeof OPERATOR_FUNCTIONS.apps)[number]>;
  storage: Pick<StorageDeclared, (typeof OPERATOR_FUNCTIONS.storage)[number]>;
}

export interface OperatorOptions {
  kubeConfig: KubeConfig;
  services: OperatorServices;
  publicUrl: string;
  /** Namespace and name of the leader-election Lease. */
  namespace?: string;
  leaseName?: string;
  identity?: string;
  /** How often every object is listed again and reconciled in the background, to catch missed events. Default 5 minutes. */
  resyncMs?: number;
  /** Objects reconciled at once. */
  concurrency?: number;
  log?: (message: string) => void;
}

export type RunningOperator = RunningController;

/**
 * The operator: the controller runtime (`runtime/`) run for Tenant and App objects
 * (`reconcile-tenant.ts`, `reconcile-app.ts`), while it holds the leader Lease. Objects look at
 * their tenants again as soon as the tenants service announces a status change.
 */
export function startOperator(options: OperatorOptions): RunningOperator {
  const log = options.log ?? (() => {});
  const kube = kubeFromConfig(options.kubeConfig);
  const identity = options.identity ?? `operator-${randomUUID().slice(0, 8)}`;
  const { tenants, apps, storage } = options.services;
  // Events about cluster-scoped objects belong in the `default` namespace (the API server insists).
  const event = eventRecorder(kube, { namespace: 'default', component: 'svc-platform-operator', identity, log });
  /** The Namespaces and Secrets ensured since the last resync. */
  const ensured: Ensured = new Map();
  const kinds = [
    tenantKind({
      tenants,
      storageReadiness: (tenantId) => storage.readiness(tenantId),
      provisionStorage: (tenantId, backends) => storage.startProvisioning(tenantId, backends),
      publicUrl: options.publicUrl,
      ensured,
      event,
    }),
    appKind({ apps, tenants, event }),
  ];
  return startController({
    kubeConfig: options.kubeConfig,
    kube,
    kinds,
    election: { namespace: options.namespace ?? 'default', name: options.leaseName ?? 'svc-platform-operator', identity },
    resyncMs: options.resyncMs ?? 300_000,
    concurrency: options.concurrency ?? 16,
    followed: { name: 'tenant status notifications', subscribe: (changed, resumed) => tenants.onStatusChange(changed, resumed) },
    log,
  });
}
