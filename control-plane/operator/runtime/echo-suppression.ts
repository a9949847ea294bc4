import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { CustomObject } from '../custom-object.ts';
import { statusOf, type Kube } from '../kube.ts';

/**
 * Whether a watched object is settled: its spec observed, its finalizer on, not being deleted.
 * Watch events about settled objects (the echo of the controller's own status writes, a re-listed
 * watch) need no reconcile; what changes outside Kubernetes arrives as a followed change.
 */
export const settled = (object: CustomObject): boolean =>
  !object.metadata.deletionTimestamp && object.status?.observedGeneration === object.metadata.generation && (object.metadata.finalizers?.length ?? 0) > 0;

/**
 * Whether a patch's answer is only the reconcile's own write: it shows no spec change and no
 * deletion that the reconcile (which read `read`) did not see. Its watch event is then an echo.
 */
export function isOwnWrite(read: CustomObject, answer: Partial<CustomObject> | undefined): boolean {
  const metadata = answer?.metadata;
  if (!metadata?.resourceVersion) return false;
  return metadata.generation === read.metadata.generation && !!metadata.deletionTimestamp === !!read.metadata.deletionTimestamp;
}

/**
 * The controller's own writes, by queue key: the resource versions the last reconcile of each
 * object wrote. A watch event carrying one is the echo of that write: the reconcile already knew
 * that state, so it needs no other look.
 */
export function createEchoSuppression() {
  const ownWrites = new Map<string, Set<string>>();
  return {
    /** A reconcile of `key` starts: what the one before wrote is forgotten; the set this one's writes are noted in. */
    begin(key: string): Set<string> {
      const written = new Set<string>();
      ownWrites.set(key, written);
      return written;
    },
    /** Whether a watch event about `object` (queue key `key`) needs a reconcile: not settled, not an echo. */
    needsReconcile(key: string, object: CustomObject): boolean {
      const version = object.metadata.resourceVersion;
      const echo = version !== undefined && !!ownWrites.get(key)?.has(version);
      return !settled(object) && !echo;
    },
    forget(key: string): void {
      ownWrites.delete(key);
    },
    clear(): void {
      ownWrites.clear();
    },
  };
}

export type EchoSuppression = ReturnType<typeof createEchoSuppression>;

/** What a reconcile tells the controller's copy of its object: a patch's answer, or that the object is gone. */
export interface CopyKeeper {
  keep(answer: CustomObject): void;
  gone(): void;
}

/**
 * `kube`, noting in `written` the resource version of every patch of `read` it sends that is the
 * reconcile's own write (see `isOwnWrite`): a version that carries a spec change or a deletion the
 * reconcile did not read is not noted, so its watch event is still reconciled. Each answer goes to
 * `copy`, and so does a patch refused because the object is gone.
 */
export function notingWrites(kube: Kube, read: CustomObject, written: Set<string>, copy: CopyKeeper): Kube {
  const note = (answer: unknown) => {
    const object = answer as Partial<CustomObject> | undefined;
    if (isOwnWrite(read, object)) written.add(object!.metadata!.resourceVersion!);
    if (object?.metadata?.resourceVersion) copy.keep(answer as CustomObject);
    return answer;
  };
  const refused = (error: unknown) => {
    if (statusOf(error) === 404) copy.gone();
    throw error;
  };
  const custom = Object.create(kube.custom) as CustomObjectsApi;
  custom.patchClusterCustomObject = (...args: Parameters<CustomObjectsApi['patchClusterCustomObject']>) =>
    kube.custom.patchClusterCustomObject(...args).then(note, refused);
  custom.patchClusterCustomObjectStatus = (...args: Parameters<CustomObjectsApi['patchClusterCustomObjectStatus']>) =>
    kube.custom.patchClusterCustomObjectStatus(...args).then(note, refused);
  return { ...kube, custom };
}
