import type { Tx } from '../db/client.ts';
import { DeclaredElsewhereError } from '../errors.ts';
import type { Declarer, DeclaringObject } from './declarations.schema.ts';

async function holderOf(tx: Tx, subject: string): Promise<DeclaringObject | undefined> {
  const rows = await tx<DeclaringObject[]>`
    select object_kind as kind, object_name as name, object_uid as uid from declarations where subject = ${subject}`;
  return rows[0];
}

/**
 * Records `declarer` as the object that declares `subject` when no other object does (or the
 * other is one it replaces); otherwise throws `DeclaredElsewhereError`. A subject nobody declared
 * yet (made through v4) is adopted. Only reads when the claim is already the declarer's. Two
 * declarers at once meet on the row's key: the second waits for the first and is refused.
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
  if (rows.length) return;
  // Another declarer wrote between the read and the write: judge its claim instead.
  return claim(tx, subject, what, declarer);
}

/**
 * Whether `declarer` may remove `subject`: it declares it, or nobody did (it is then claimed, so
 * that a declarer arriving meanwhile waits for this transaction). Another object's subject is left alone.
 */
export async function holds(tx: Tx, subject: string, declarer: DeclaringObject): Promise<boolean> {
  try {
    await claim(tx, subject, subject, declarer);
    return true;
  } catch (error) {
    if (error instanceof DeclaredElsewhereError) return false;
    throw error;
  }
}

/** Drops the claim on a subject that is gone, so that its key can be declared afresh. */
export async function forget(tx: Tx, subject: string, declarer: DeclaringObject): Promise<void> {
  await tx`delete from declarations where subject = ${subject} and object_uid = ${declarer.uid}`;
}
