import type { Tx } from '../db/client.ts';
import type { AggregateRow } from '../query/aggregate.ts';
import type { SqlText } from '../query/sql-text.ts';

/** Runs a compiled aggregate statement in the tenant's transaction. */
export function runAggregate(tx: Tx, statement: SqlText): Promise<AggregateRow[]> {
  return tx.unsafe<AggregateRow[]>(statement.text, statement.values as never[], { prepare: true });
}
