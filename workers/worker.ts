import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { WorkflowType } from '../control-plane/temporal/workflow-contract.ts';
import { createActivities, type WorkerServices } from './activities/index.ts';
import { activityTraceInterceptors, type ActivityLog } from './activity-trace.ts';
import { STORAGE_HEARTBEAT_MS } from './activities/storage.activities.ts';

const WORKFLOWS = fileURLToPath(new URL('./workflows/index.ts', import.meta.url));
/** Workflow interceptors bundled with the workflows: activities get the run's trace in a header. */
const WORKFLOW_INTERCEPTORS = fileURLToPath(new URL('./workflows/trace-interceptors.ts', import.meta.url));
/** The workflows the contract names, each one this worker registers (the compiler refuses a name with no workflow). */
export type RegisteredWorkflows = Pick<typeof import('./workflows/index.ts'), WorkflowType>;
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
  return (bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS, workflowInterceptorModules: [WORKFLOW_INTERCEPTORS], logger: { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} } }));
}

/**
 * Replays a recorded history (as `temporal workflow show --output json` writes it) with this
 * worker's workflows; rejects when they would not issue the same commands.
 */
export async function replayHistory(history: unknown): Promise<void> {
  installRuntime();
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history);
}

export interface RunningWorker {
  /** Whether the worker polls its task queue and the Temporal frontend answers (within 2 s). */
  health(): Promise<{ worker: string; temporal: 'ok' | 'unreachable' }>;
  shutdown(): Promise<void>;
}

const HEALTH_TIMEOUT_MS = 2_000;

/** Starts a worker on `taskQueue` that runs the platform's workflows with activities over `services`. */
export async function startWorker(options: {
  address: string;
  namespace: string;
  taskQueue: string;
  services: WorkerServices;
  /** Receives one line per activity run, with the trace of the request that started its run. */
  activityLog?: ActivityLog;
}): Promise<RunningWorker> {
  installRuntime();
  const connection = await NativeConnection.connect({ address: options.address });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowBundle: await workflowBundle(),
    activities: createActivities(options.services),
    interceptors: { activity: [activityTraceInterceptors(options.activityLog)] },
    // Heartbeats reach the server as often as storage steps send them (not at 0.8 x their timeout), so a cancellation reaches a step within seconds.
    maxHeartbeatThrottleInterval: STORAGE_HEARTBEAT_MS,
  });
  const running = worker.run();
  return {
    async health() {
      const serving = await Promise.race([
        // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-comparison -- 1 is SERVING in the gRPC health protocol; its enum lives in a package the platform does not depend on
        connection.healthService.check({}).then((reply) => reply.status === 1, () => false),
        new Promise<false>((resolve) => setTimeout(resolve, HEALTH_TIMEOUT_MS, false).unref()),
      ]);
      return { worker: worker.getState().toLowerCase(), temporal: serving ? 'ok' : 'unreachable' };
    },
    async shutdown() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
