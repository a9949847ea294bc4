import type { Tx } from '../db/client.ts';
import { ConflictError } from '../errors.ts';

/** The Kubernetes object (cluster-scoped, so named by kind and name) that declares a tenant or an app. */
export interface DeclaringObject {
  kind: 'Tenant' | 'App';
  name: string;
  uid: string;
}

/** Who declares, and the uids of earlier declaring objects known to be gone (their claims may be taken over). */
export interface Declarer extends DeclaringObject {
  replacing?: string[];
}

export const tenantSubject = (tenantId: string) => `tenant/${tenantId}`;
export const appSubject = (appId: string) => `app/${appId}`;

/** Another object declares this tenant or app; `holder` names it, so the caller can check it still exists. */
export class DeclaredElsewhereError extends ConflictError {
  constructor(
    what: string,
    readonly holder: DeclaringObject,
  ) {
    super(`${what} is declared by ${holder.kind} "${holder.name}"`, { declaredBy: { kind: holder.kind, name: holder.name } });
  }
}

async function holderOf(tx: Tx, subject: string): Promise<DeclaringObject | undefined> {
  const rows = await tx<DeclaringObject[]>`
    select object_kind as kind, object_name as name, object_uid as uid from declarations where subject = ${subject}`;
  return rows[0];
}

/**
 * Records `declarer` as the object that declares `subject` when no other object does (or the
 * other is one it replaces); otherwise throws `DeclaredElsewhereError`. A subject nobody declared
 * yet (made through v4) is adopted. Reads only when the claim is already the declarer's.
 */
export async function claim(tx: Tx, subject: string, what: string, declarer: Declarer): Promise<void> {
  const holder = await holderOf(tx, subject);
  if (holder?.uid === declarer.uid) return;
  if (holder && !declarer.replacing?.includes(holder.uid)) throw new DeclaredElsewhereError(what, holder);
  const rows = await tx`
    insert into declarations (subject, object_kind, object_name, object_uid)
    values (${subject}, ${declarer.kind}, ${declarer.name}, ${declarer.uid})
    on conflict (subject) do update
      set object_kind = excluded.object_kind, object_name = excluded.object_name, object_uid = excluded.object_uid, declared_at = now()
      where declarations.object_uid = ${holder?.uid ?? null}
    returning 1`;
  // Another declarer got there between the read and the write.
  if (!rows.length) throw new DeclaredElsewhereError(what, (await holderOf(tx, subject))!);
}

/**
 * Whether `declarer` may remove `subject`: it declares it, or nobody does. The claim is dropped
 * with it. Another object's subject is left alone.
 */
export async function release(tx: Tx, subject: string, declarer: DeclaringObject): Promise<boolean> {
  const holder = await holderOf(tx, subject);
  if (holder && holder.uid !== declarer.uid) return false;
  if (holder) await tx`delete from declarations where subject = ${subject}`;
  return true;
}
