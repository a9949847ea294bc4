import { GROUP, mergePatch, VERSION, type Kube } from '../kube.ts';
import type { CustomObject, StepResult } from '../custom-object.ts';

/** Which objects (`plural`) and which of the operator's finalizers. */
export interface FinalizerOf {
  plural: string;
  finalizer: string;
}

/**
 * Ensures the finalizer that lets the operator clean up before the object goes. Idempotent. The
 * finalizer list is written whole, so the patch carries the resource version it was read at: if
 * the object changed meanwhile (another finalizer, a deletion), the API server refuses it (409).
 */
export async function ensureFinalizer(kube: Kube, of: FinalizerOf, object: CustomObject): Promise<StepResult> {
  const finalizers = object.metadata.finalizers ?? [];
  if (finalizers.includes(of.finalizer)) return undefined;
  await kube.custom.patchClusterCustomObject(
    { group: GROUP, version: VERSION, plural: of.plural, name: object.metadata.name, body: { metadata: { finalizers: [...finalizers, of.finalizer], resourceVersion: object.metadata.resourceVersion } } },
    mergePatch,
  );
  object.metadata.finalizers = [...finalizers, of.finalizer];
  return undefined;
}

/** Removes the operator's finalizer, letting Kubernetes delete the object. Idempotent. */
export async function removeFinalizer(kube: Kube, of: FinalizerOf, object: CustomObject): Promise<void> {
  const finalizers = object.metadata.finalizers ?? [];
  if (!finalizers.includes(of.finalizer)) return;
  await kube.custom.patchClusterCustomObject(
    { group: GROUP, version: VERSION, plural: of.plural, name: object.metadata.name, body: { metadata: { finalizers: finalizers.filter((f) => f !== of.finalizer), resourceVersion: object.metadata.resourceVersion } } },
    mergePatch,
  );
}
