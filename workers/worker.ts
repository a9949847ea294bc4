import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { Services } from '../control-plane/contracts.ts';
import { createActivities } from './activities/index.ts';

const WORKFLOWS = fileURLToPath(new URL('./workflows/index.ts', import.meta.url));
let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
let runtimeInstalled = false;

/** Worker logs at WARN and above; installed once per process, before the first connection. */
function installRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({ logger: new DefaultLogger((process.env.TEMPORAL_LOG_LEVEL as 'WARN' | undefined) ?? 'WARN') });
}

/** The workflow bundle, built once per process (offline; a few seconds). */
function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  return (bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS, logger: { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} } }));
}

export interface RunningWorker {
  shutdown(): Promise<void>;
}

/** Starts a worker on `taskQueue` that runs the platform's workflows with activities over `services`. */
export async function startWorker(options: {
  address: string;
  namespace: string;
  taskQueue: string;
  services: Services;
}): Promise<RunningWorker> {
  installRuntime();
  const connection = await NativeConnection.connect({ address: options.address });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowBundle: await workflowBundle(),
    activities: createActivities({ services: options.services }),
  });
  const running = worker.run();
  return {
    async shutdown() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
