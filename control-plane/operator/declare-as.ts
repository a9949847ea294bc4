import type { DeclaringObject, Declarer } from '../declarations/declarations.schema.ts';
import { DeclaredElsewhereError } from '../errors.ts';
import type { CustomObject } from './custom-object.ts';
import { APPS, GROUP, statusOf, TENANTS, VERSION, type Kube } from './kube.ts';

const PLURALS: Record<DeclaringObject['kind'], string> = { Tenant: TENANTS, App: APPS };

/** The object as the declarer of its tenant or app. */
export const declarerOf = (object: CustomObject): DeclaringObject => ({ kind: object.kind as DeclaringObject['kind'], name: object.metadata.name, uid: object.metadata.uid });

/** Whether the declaring object still exists (a namesake created later is another object). */
async function stillExists(kube: Kube, holder: DeclaringObject): Promise<boolean> {
  try {
    const found = (await kube.custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURALS[holder.kind], name: holder.name })) as CustomObject;
    return found.metadata.uid === holder.uid;
  } catch (error) {
    if (statusOf(error) === 404) return false;
    throw error;
  }
}

/**
 * Runs `declare` as `object`. When another object declares the tenant or app, the refusal stands
 * while that object exists; one that is gone (removed without its finalizer running) leaves a
 * claim that is taken over.
 */
export async function declareAs<T>(kube: Kube, object: CustomObject, declare: (declarer: Declarer) => Promise<T>): Promise<T> {
  const replacing: string[] = [];
  for (;;) {
    try {
      return await declare({ ...declarerOf(object), replacing });
    } catch (error) {
      if (!(error instanceof DeclaredElsewhereError) || replacing.includes(error.holder.uid) || (await stillExists(kube, error.holder))) throw error;
      replacing.push(error.holder.uid);
    }
  }
}
