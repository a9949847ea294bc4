import type { CustomObject } from '../custom-object.ts';
import { mergePatch, type Kube } from '../kube.ts';

/** Which objects (group, version, plural) and which finalizer of the controller's. */
export interface FinalizerOf {
  group: string;
  version: string;
  plural: string;
  finalizer: string;
}

/** Writes the object's whole finalizer list, with the resource version it was read at (409 when it moved on). */
const writeFinalizers = (kube: Kube, of: FinalizerOf, object: CustomObject, finalizers: string[]) =>
  kube.custom.patchClusterCustomObject(
    {
      group: of.group,
      version: of.version,
      plural: of.plural,
      name: object.metadata.name,
      body: { metadata: { finalizers, resourceVersion: object.metadata.resourceVersion } },
    },
    mergePatch,
  );

/**
 * Ensures the finalizer that lets the controller clean up before the object goes. Idempotent. The
 * finalizer list is written whole, so the patch carries the resource version it was read at: if
 * the object changed meanwhile (another finalizer, a deletion), the API server refuses it (409).
 */
export async function ensureFinalizer(kube: Kube, of: FinalizerOf, object: CustomObject): Promise<void> {
  const finalizers = object.metadata.finalizers ?? [];
  if (finalizers.includes(of.finalizer)) return;
  await writeFinalizers(kube, of, object, [...finalizers, of.finalizer]);
  object.metadata.finalizers = [...finalizers, of.finalizer];
}

/** Removes the controller's finalizer, letting Kubernetes delete the object. Idempotent. */
export async function removeFinalizer(kube: Kube, of: FinalizerOf, object: CustomObject): Promise<void> {
  const finalizers = object.metadata.finalizers ?? [];
  if (!finalizers.includes(of.finalizer)) return;
  await writeFinalizers(
    kube,
    of,
    object,
    finalizers.filter((f) => f !== of.finalizer),
  );
}
