import { ensureCollection, listCollections, tableIsolation } from '../storage.repo.ts';
import type { DoctorCheck } from '../storage.schema.ts';
import { fail, isolationCheck, isolationProblems, ok, remembered, requireIsolation, warn, type BackendDeps, type BackendDriver } from './backend.ts';

const TABLES = ['docstore_collections', 'docstore_documents'] as const;

/** The collection every tenant's document store starts with. */
export const DEFAULT_COLLECTION = 'default';

/** The tenant's JSON document store: collections of documents in PostgreSQL, isolated by row-level security. */
export function createDocumentdbBackend(deps: BackendDeps): BackendDriver {
  const tables = () => deps.db.system((tx) => tableIsolation(tx, TABLES));
  const isolatedTables = remembered(tables, (t) => isolationProblems(t).length === 0);

  return {
    backend: 'documentdb',

    async location() {
      const { database, schema } = await deps.database();
      return { store: 'postgresql', database, schema, objects: [...TABLES], isolation: 'row-level-security' };
    },

    async reconcile(tenantId, { apply }) {
      requireIsolation('documentdb', await isolatedTables());
      const present = await deps.db.inTenant(tenantId, async (tx) => {
        if ((await listCollections(tx)).some((c) => c.name === DEFAULT_COLLECTION)) return true;
        if (apply) await ensureCollection(tx, DEFAULT_COLLECTION);
        return false;
      });
      if (present) return [];
      return [{ backend: 'documentdb', action: 'create', object: 'collection', name: DEFAULT_COLLECTION, description: `create the tenant's collection "${DEFAULT_COLLECTION}"` }];
    },

    async checks(tenantId) {
      const isolation = isolationCheck('documentdb', await tables());
      const checks: DoctorCheck[] = [isolation];
      if (isolation.result === 'fail') return checks;
      let collections;
      try {
        collections = await deps.db.inTenant(tenantId, (tx) => listCollections(tx));
      } catch (error) {
        checks.push(fail('documentdb', 'reachable', `the document store did not answer: ${(error as Error).message}`, 'check the database connection and the grants of svc_app on the docstore tables'));
        return checks;
      }
      const documents = collections.reduce((sum, c) => sum + c.documents, 0);
      checks.push(ok('documentdb', 'reachable', `the document store answers as the tenant: ${collections.length} collection(s), ${documents} document(s)`));
      checks.push(
        collections.some((c) => c.name === DEFAULT_COLLECTION)
          ? ok('documentdb', 'default-collection', `collection "${DEFAULT_COLLECTION}" exists`)
          : warn('documentdb', 'default-collection', `collection "${DEFAULT_COLLECTION}" is missing`, 'provision the backend: POST .../storage/provision with {"backend": "documentdb"}'),
      );
      return checks;
    },
  };
}
