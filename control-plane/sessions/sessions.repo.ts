import type { Tx } from '../db/client.ts';

export async function insertSession(
  tx: Tx,
  session: { idHash: string; subject: string; accessToken: string; refreshToken?: string; idToken?: string; expiresAt: Date },
): Promise<void> {
  await tx`insert into sessions (id_hash, subject, access_token, refresh_token, id_token, expires_at)
           values (${session.idHash}, ${session.subject}, ${session.accessToken}, ${session.refreshToken ?? null},
                   ${session.idToken ?? null}, ${session.expiresAt})`;
}

export async function findLiveSession(tx: Tx, idHash: string): Promise<{ accessToken: string; idToken: string | null } | undefined> {
  const rows = await tx<{ accessToken: string; idToken: string | null }[]>`
    select access_token as "accessToken", id_token as "idToken" from sessions where id_hash = ${idHash} and expires_at > now()`;
  return rows[0];
}

export async function deleteSession(tx: Tx, idHash: string): Promise<void> {
  await tx`delete from sessions where id_hash = ${idHash} or expires_at < now() - interval '1 day'`;
}

/** Drops sessions that expired over a day ago: nothing can use them any more. */
export async function deleteExpiredSessions(tx: Tx): Promise<void> {
  await tx`delete from sessions where expires_at < now() - interval '1 day'`;
}
