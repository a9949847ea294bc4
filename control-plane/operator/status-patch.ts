import { GROUP, mergePatch, statusOf, VERSION, FIELD_MANAGER, type Kube } from './kube.ts';

/**
 * Writes an object's status through the status subresource with a merge patch, the one way the
 * operator changes status. A conflict (the object moved on) is retried a few times; an object
 * that is gone needs no status.
 */
export async function patchStatus(kube: Kube, plural: string, name: string, status: Record<string, unknown>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await kube.custom.patchClusterCustomObjectStatus({ group: GROUP, version: VERSION, plural, name, body: { status }, fieldManager: FIELD_MANAGER }, mergePatch);
      return;
    } catch (error) {
      if (statusOf(error) === 404) return;
      if (statusOf(error) !== 409 || attempt >= 4) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * (attempt + 1)));
    }
  }
}
