/**
 * A control-plane process for the outbox durability test: it builds the platform's services on
 * the given database and Temporal address (the test gives one that accepts connections and never
 * answers), makes one call that commits work and then starts its workflow, and stays until it is
 * killed. Usage: `commit-then-die.ts index <tenantId> <documentId>` or
 * `commit-then-die.ts execute <tenantId> <workflowId> <input JSON> <userId>` (the user the execution runs for).
 */
import { createLocalDirectoryBlobStore } from '../../control-plane/blobs/local-directory.ts';
import { createDb } from '../../control-plane/db/client.ts';
import { systemActor } from '../../control-plane/identity/system-actor.ts';
import { createServices } from '../../control-plane/app/services.ts';
import { createTemporalWorkflows } from '../../control-plane/temporal/temporal-workflows.ts';

const [action, tenantId, id, input, userId] = process.argv.slice(2);
const env = process.env;
const db = createDb(env.DATABASE_URL!, { tenantDatabaseUrl: env.TENANT_DATABASE_URL });
const workflows = createTemporalWorkflows({ address: env.TEMPORAL_ADDRESS!, namespace: env.TEMPORAL_NAMESPACE!, taskQueue: env.TEMPORAL_TASK_QUEUE! });
const services = createServices({ db, workflows, blobs: createLocalDirectoryBlobStore(env.SVC_BLOB_DIR!), searchVectors: { embedder: null, vectors: null } });
const actor = systemActor(tenantId!, { onBehalfOf: userId });

setInterval(() => {}, 60_000);
if (action === 'index') await services.documents.submitIndexJob(actor, { documentId: id!, chunkSize: 100, chunkOverlap: 20 });
else await services.orchestrate.execute(actor, { workflowId: id!, input: JSON.parse(input!) as Record<string, unknown>, metadata: {}, async: true });
process.stdout.write('returned\n');
