import type { Tx } from '../db/client.ts';
import { claim, forget, holds } from './declarations.repo.ts';
import type { Declarer, DeclaringObject } from './declarations.schema.ts';

export type DeclarationsService = ReturnType<typeof createDeclarationsService>;

/**
 * Which Kubernetes object declares a tenant or an app, for the tenants and apps services. Each
 * call joins the caller's transaction `tx`, so that a refused claim undoes what the caller wrote
 * in it, and a claim stands or falls with the tenant or app it names.
 */
export function createDeclarationsService() {
  return {
    /** Records `declarer` as the object that declares `subject`, or throws `DeclaredElsewhereError` naming the holder. */
    claim: (tx: Tx, subject: string, what: string, declarer: Declarer): Promise<void> => claim(tx, subject, what, declarer),
    /** Whether `declarer` may remove `subject`: it declares it, or nobody did (it then claims it). */
    holds: (tx: Tx, subject: string, declarer: DeclaringObject): Promise<boolean> => holds(tx, subject, declarer),
    /** Drops `declarer`'s claim on a subject that is gone. */
    forget: (tx: Tx, subject: string, declarer: DeclaringObject): Promise<void> => forget(tx, subject, declarer),
  };
}
