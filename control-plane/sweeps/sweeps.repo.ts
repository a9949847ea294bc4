import type { Tx } from '../db/client.ts';

/**
 * Platform work: claims sweep `name` for this process when it last ran `everyMs` ago or longer
 * (or never): true for exactly one of the processes asking at once, which then runs it.
 */
export async function claimSweep(tx: Tx, name: string, everyMs: number): Promise<boolean> {
  const rows = await tx.unsafe(
    `insert into scheduled_sweeps as s (name, ran_at) values ($1, now())
     on conflict (name) do update set ran_at = now() where s.ran_at <= now() - $2::int * interval '1 ms'
     returning name`,
    [name, everyMs] as never[],
  );
  return rows.length > 0;
}

/** Platform work: every tenant's id, deleted ones too (what they left behind is swept as well). */
export async function allTenantIds(tx: Tx): Promise<string[]> {
  const rows = await tx<{ id: string }[]>`select id::text as id from tenant_directory order by id`;
  return rows.map((r) => r.id);
}
