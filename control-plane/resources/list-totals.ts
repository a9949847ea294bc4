import type { Tx } from '../db/client.ts';
import { createLruMap } from '../lru-map.ts';
import type { ListStatements } from '../query/list.ts';
import { boundedCount, changedSince, estimateListTotal, selectListPage, selectListTotal, type ListRow } from './resources.repo.ts';

/** Lists whose totals a process remembers at most; the least recently used is forgotten first. */
const MAX_REMEMBERED = 10_000;

/**
 * The most matching rows a default total counts: up to here the total is exact, past it PostgreSQL's
 * estimate. Counting stops at the bound, so a list's cost does not grow with the rows it matches.
 */
export const EXACT_TOTAL_BOUND = 1_000;

/** `exact`: count every matching row; `estimated` (the default): exact up to the bound, estimated past it. */
export type CountMode = 'exact' | 'estimated';

export interface ListTotal {
  total: number;
  /** False when `total` is PostgreSQL's estimate (more than the bound match). */
  exact: boolean;
}

interface Counted extends ListTotal {
  /** The snapshot the total was counted in (`pg_snapshot` text). */
  snapshot: string;
}

export interface ListTotals {
  /** A list's page rows and its total, counted as `mode` says. */
  read(tx: Tx, statements: ListStatements, mode?: CountMode): Promise<{ rows: ListRow[] } & ListTotal>;
}

/**
 * Counting is most of a filtered list's cost: PostgreSQL visits every matching row. By default a
 * list counts at most `bound + 1` of them; past the bound its total is the planner's estimate
 * (never less than the bound), and says so. Each list's total (its count statement, values and
 * mode) is remembered with the snapshot it was counted in, and given again while no change of the
 * list's types has committed since, which one index read of the history tells, in the page's round
 * trip: a write costs the next read one bounded count, not a count of every row. A change made
 * outside the platform (one that writes no history) is not seen.
 */
export function createListTotals(maxRemembered = MAX_REMEMBERED, bound = EXACT_TOTAL_BOUND): ListTotals {
  const remembered = createLruMap<Counted>(maxRemembered);

  /** Counts afresh; a total counted by a transaction that has written holds only for it. */
  async function count(tx: Tx, key: string, statements: ListStatements, mode: CountMode): Promise<ListTotal> {
    const counted = await selectListTotal(tx, mode === 'exact' ? statements.count : boundedCount(statements.matching, bound));
    const exact = mode === 'exact' || counted.total <= bound;
    const total = exact ? counted.total : Math.max(bound + 1, await estimateListTotal(tx, statements.matching));
    if (counted.unwritten) remembered.set(key, { total, exact, snapshot: counted.snapshot });
    else remembered.delete(key);
    return { total, exact };
  }

  return {
    async read(tx, statements, mode = 'estimated') {
      const key = `${mode}\n${statements.count.text}\n${JSON.stringify(statements.count.values)}`;
      const known = remembered.get(key);
      if (!known) {
        const [rows, total] = await Promise.all([selectListPage(tx, statements.page), count(tx, key, statements, mode)]);
        return { rows, ...total };
      }
      const [rows, changed] = await Promise.all([selectListPage(tx, statements.page), changedSince(tx, statements.types, known.snapshot)]);
      if (changed) return { rows, ...(await count(tx, key, statements, mode)) };
      return { rows, total: known.total, exact: known.exact };
    },
  };
}
