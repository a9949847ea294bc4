import { sameJson } from '../../json/same-json.ts';
import type { CustomObject } from '../custom-object.ts';
import { FIELD_MANAGER, mergePatch, statusOf, type Kube } from '../kube.ts';

/** The API resource of a kind of cluster-scoped custom object. */
export interface Resource {
  group: string;
  version: string;
  plural: string;
}

/** Whether merging `status` into the object's status would change nothing. */
export function statusUnchanged(object: CustomObject, status: Record<string, unknown>): boolean {
  const current = object.status ?? {};
  return Object.entries(status).every(([field, value]) => sameJson(value, current[field]));
}

/**
 * Writes an object's status through the status subresource with a merge patch, the one way the
 * controller changes status; a patch that would change nothing is not sent (a settled object is
 * looked at again and again); the object's resource version becomes the answer's. A conflict (the
 * object moved on) is retried a few times; an object that is gone needs no status.
 */
export async function patchStatus(kube: Kube, resource: Resource, object: CustomObject, status: Record<string, unknown>): Promise<void> {
  if (statusUnchanged(object, status)) return;
  for (let attempt = 0; ; attempt++) {
    try {
      const answer = (await kube.custom.patchClusterCustomObjectStatus(
        { group: resource.group, version: resource.version, plural: resource.plural, name: object.metadata.name, body: { status }, fieldManager: FIELD_MANAGER },
        mergePatch,
      )) as Partial<CustomObject> | undefined;
      // A later patch of the same reconcile that carries a resource version (the finalizer's) builds on this one.
      if (answer?.metadata?.resourceVersion) object.metadata.resourceVersion = answer.metadata.resourceVersion;
      return;
    } catch (error) {
      if (statusOf(error) === 404) return;
      if (statusOf(error) !== 409 || attempt >= 4) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * (attempt + 1)));
    }
  }
}
