import type { CustomObject, StepResult } from '../custom-object.ts';
import type { Kube } from '../kube.ts';

/**
 * A kind of cluster-scoped custom object the controller reconciles, declared once: its API
 * resource, its finalizer, and how one object of it is brought to its spec and cleaned up.
 * `reconcile` and `finalize` get `kube` with the controller's echo suppression and cache around
 * it: write through it. The controller adds the finalizer before `reconcile` and removes it after
 * a `finalize` that asks for no requeue.
 */
export interface ControlledKind<O extends CustomObject = CustomObject> {
  /** `Tenant`, `App`: as in the objects' `kind`. */
  kind: string;
  group: string;
  version: string;
  plural: string;
  finalizer: string;
  /** Brings an object that is not being deleted to its spec. */
  reconcile(object: O, kube: Kube): Promise<StepResult>;
  /** Cleans up after an object being deleted. */
  finalize(object: O, kube: Kube): Promise<StepResult>;
  /** The followed topics (see `FollowedChanges`) whose change is a reason to look at the object again. */
  follows?(object: O): string[];
  /** Told of every watched version of an object by name (`undefined`: it is gone), e.g. for metrics. */
  observe?(name: string, object: O | undefined): void;
  /** Leadership ended: what `observe` was told is no guide any more. */
  forget?(): void;
  /** A periodic re-list starts: caches of what was ensured are dropped, so everything is checked again. */
  resync?(): void;
}

/**
 * Changes outside Kubernetes that objects follow (a tenant's status on the platform): `changed`
 * with the topic that changed; `resumed` after the source reconnected, when changes may have been
 * missed. `name` says what they are in logs.
 */
export interface FollowedChanges {
  name: string;
  subscribe(changed: (topic: string) => void, resumed: () => void): Promise<{ stop(): Promise<void> }>;
}

/** Queue entries name an object by its kind's plural and its name. */
export const queueKey = (kind: ControlledKind, name: string) => `${kind.plural}/${name}`;

/** The kind and name a queue key names. */
export function parseQueueKey(kinds: readonly ControlledKind[], key: string): { kind: ControlledKind; name: string } {
  const [plural, name] = key.split('/') as [string, string];
  const kind = kinds.find((k) => k.plural === plural);
  if (!kind) throw new Error(`no controlled kind has the plural "${plural}"`);
  return { kind, name };
}
