import {
  columnExists,
  countProjections,
  deleteOrphanedProjections,
  deleteResourceProjections,
  lockProjections,
  physicalIndexes,
  projectionDelta,
  projectResources,
  tableIsolation,
} from '../storage.repo.ts';
import { cancellingOnAbort, type Tx } from '../../db/client.ts';
import type { DoctorCheck, StorageChange } from '../storage.schema.ts';
import { fail, isolationCheck, isolationProblems, MIGRATIONS_HINT, ok, remembered, requireIsolation, StorageUnavailableError, warn, type BackendDeps, type BackendDriver } from './backend.ts';

const TABLE = 'search_projections';
const FULLTEXT_INDEX = 'search_projections_tsv';
const PROVISION_HINT = 'provision the backend: POST .../storage/provision with {"backend": "search"} (add "rebuildSearch": true to rebuild it whole)';

const REFUSED_HINT = 'shorten or fix the source named (write it again, or re-index the document): its chunks are embedded again when it is written';

const change = (action: StorageChange['action'], count: number, description: string): StorageChange => ({
  backend: 'search',
  action,
  object: 'projection',
  name: TABLE,
  count,
  description,
});

/**
 * The tenant's search index: one projection row per resource with a weighted full-text vector
 * (GIN-indexed) and an embedding column for vector search, isolated by row-level security.
 */
export function createSearchBackend(deps: BackendDeps): BackendDriver {
  const tables = () => deps.db.system((tx) => tableIsolation(tx, [TABLE]));
  const fulltextIndex = async () => (await deps.db.system((tx) => physicalIndexes(tx, [FULLTEXT_INDEX]))).get(FULLTEXT_INDEX);
  const isolatedTables = remembered(tables, (t) => isolationProblems(t).length === 0);
  const validFulltextIndex = remembered(async () => (await fulltextIndex())?.valid === true, (valid) => valid);

  return {
    backend: 'search',

    async location() {
      const { database, schema } = await deps.database();
      return { store: 'postgresql', database, schema, objects: [TABLE, FULLTEXT_INDEX], isolation: 'row-level-security' };
    },

    async reconcile(tenantId, { apply, rebuildSearch, signal }) {
      /** A projection run: in the tenant's transaction, under its projection lock, its statements cancelled with the step. */
      const projecting = <T>(run: (tx: Tx) => Promise<T>) =>
        deps.db.inTenant(tenantId, (tx) =>
          cancellingOnAbort(deps.db.sql, tx, signal, async () => {
            await lockProjections(tx);
            return run(tx);
          }),
        );
      requireIsolation('search', await isolatedTables());
      if (!(await validFulltextIndex())) throw new StorageUnavailableError(`the full-text index ${FULLTEXT_INDEX} is missing or invalid`, MIGRATIONS_HINT);
      const delta = await deps.db.inTenant(tenantId, (tx) => projectionDelta(tx));
      if (rebuildSearch) {
        if (!apply) return [change('rebuild', delta.resources, `rebuild the projection of all ${delta.resources} resource(s)`)];
        const rebuilt = await projecting(async (tx) => {
          await deleteResourceProjections(tx);
          return projectResources(tx);
        });
        return [change('rebuild', rebuilt.created, `rebuilt the projection of all ${rebuilt.created} resource(s)`)];
      }
      let counts = { created: delta.missing, updated: delta.stale, deleted: delta.orphaned };
      if (apply && (delta.missing || delta.stale || delta.orphaned)) {
        counts = await projecting(async (tx) => ({ ...(await projectResources(tx)), deleted: await deleteOrphanedProjections(tx) }));
      }
      const changes: StorageChange[] = [];
      if (counts.created) changes.push(change('create', counts.created, `project ${counts.created} resource(s) not yet searchable`));
      if (counts.updated) changes.push(change('update', counts.updated, `reproject ${counts.updated} resource(s) changed since their projection`));
      if (counts.deleted) changes.push(change('drop', counts.deleted, `remove ${counts.deleted} projection(s) of deleted resources`));
      return changes;
    },

    async checks(tenantId) {
      const isolation = isolationCheck('search', await tables());
      const checks: DoctorCheck[] = [isolation];
      if (isolation.result === 'fail') return checks;
      const index = await fulltextIndex();
      checks.push(
        !index
          ? fail('search', 'fulltext-index', `the full-text index ${FULLTEXT_INDEX} is missing`, MIGRATIONS_HINT)
          : !index.valid
            ? fail('search', 'fulltext-index', `the full-text index ${FULLTEXT_INDEX} is invalid`, `REINDEX INDEX CONCURRENTLY ${FULLTEXT_INDEX}`)
            : ok('search', 'fulltext-index', `GIN index ${FULLTEXT_INDEX} on the weighted full-text vector is valid`),
      );
      const counts = await deps.db.inTenant(tenantId, (tx) => countProjections(tx));
      checks.push(
        (await deps.db.system((tx) => columnExists(tx, TABLE, 'embedding')))
          ? ok('search', 'embeddings', `${counts.embedded} of ${counts.total} projection(s) carry an embedding for vector search`)
          : fail('search', 'embeddings', `${TABLE} has no embedding column`, MIGRATIONS_HINT),
      );
      const refused = (await deps.refusedChunks?.(tenantId)) ?? { count: 0, source: null, reason: null };
      checks.push(
        refused.count
          ? warn('search', 'embedding-refused', `the embedding model refused ${refused.count} chunk(s), which have no vector (latest: ${refused.source}: ${refused.reason})`, REFUSED_HINT)
          : ok('search', 'embedding-refused', 'the embedding model refused no chunk'),
      );
      const delta = await deps.db.inTenant(tenantId, (tx) => projectionDelta(tx));
      const behind = [
        delta.missing && `${delta.missing} resource(s) not projected`,
        delta.stale && `${delta.stale} stale projection(s)`,
        delta.orphaned && `${delta.orphaned} projection(s) of deleted resources`,
      ].filter(Boolean);
      checks.push(
        behind.length
          ? warn('search', 'projection', behind.join(', '), PROVISION_HINT)
          : ok('search', 'projection', `all ${delta.resources} resource(s) are projected and current`),
      );
      return checks;
    },
  };
}
