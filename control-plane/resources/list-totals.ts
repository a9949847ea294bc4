import type { Tx } from '../db/client.ts';
import { createLruMap } from '../lru-map.ts';
import type { ListStatements } from '../query/list.ts';
import { changedSince, selectListPage, selectListTotal, type ListRow } from './resources.repo.ts';

/** Lists whose totals a process remembers at most; the least recently used is forgotten first. */
const MAX_REMEMBERED = 10_000;

interface Counted {
  total: number;
  /** The snapshot the total was counted in (`pg_snapshot` text). */
  snapshot: string;
}

export interface ListTotals {
  /** A list's page rows and its exact total. */
  read(tx: Tx, statements: ListStatements): Promise<{ rows: ListRow[]; total: number }>;
}

/**
 * Counting is most of a filtered list's cost: PostgreSQL visits every matching row. Each list's
 * total (its count statement with its values) is remembered with the snapshot it was counted in,
 * and given again while no change of the list's types has committed since, which one index read
 * of the history tells, in the page's round trip. A total is therefore as exact as a recount, in
 * every process; a change made outside the platform (one that writes no history) is not seen.
 */
export function createListTotals(maxRemembered = MAX_REMEMBERED): ListTotals {
  const remembered = createLruMap<Counted>(maxRemembered);
  /** Counts afresh; a total counted by a transaction that has written holds only for it. */
  const count = async (key: string, pending: ReturnType<typeof selectListTotal>) => {
    const { total, snapshot, unwritten } = await pending;
    if (unwritten) remembered.set(key, { total, snapshot });
    else remembered.delete(key);
    return total;
  };

  return {
    async read(tx, statements) {
      const key = `${statements.count.text}\n${JSON.stringify(statements.count.values)}`;
      const known = remembered.get(key);
      if (!known) {
        const [rows, total] = await Promise.all([selectListPage(tx, statements.page), count(key, selectListTotal(tx, statements.count))]);
        return { rows, total };
      }
      const [rows, changed] = await Promise.all([selectListPage(tx, statements.page), changedSince(tx, statements.types, known.snapshot)]);
      if (changed) return { rows, total: await count(key, selectListTotal(tx, statements.count)) };
      return { rows, total: known.total };
    },
  };
}
