import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { CustomObject } from '../custom-object.ts';

/** How long a watch that ended waits before it starts again. */
const RESTART_AFTER_MS = 1_000;

/**
 * Starts one watch of the objects at `path`: `onEvent` for each event, `done` once when it ends
 * (closed by the API server, or failed). Resolves once started, with how to abort it.
 */
export type StartWatch = (path: string, onEvent: (phase: string, object: CustomObject) => void, done: (error?: unknown) => void) => Promise<{ abort(): void }>;

/** A watch through the API server of `kubeConfig`. */
export const watchOf =
  (kubeConfig: KubeConfig): StartWatch =>
  (path, onEvent, done) =>
    new Watch(kubeConfig).watch(path, {}, onEvent, done);

/**
 * Watches the custom objects at `path` (`name` in logs) until stopped: a watch that ends (the API server closes
 * watches after a while) or fails to start is started again a second later. A watch started
 * afresh lists every object again as ADDED.
 */
export function keepWatching(
  startWatch: StartWatch,
  path: string,
  onEvent: (phase: string, object: CustomObject) => void,
  options: { name: string; log(message: string): void },
): { stop(): void } {
  let stopped = false;
  let current: { abort(): void } | undefined;
  const again = () => {
    if (!stopped) setTimeout(() => void start(), RESTART_AFTER_MS).unref();
  };
  async function start(): Promise<void> {
    if (stopped) return;
    try {
      const controller = await startWatch(path, onEvent, again);
      // Stopped while it started: this watch is not wanted any more.
      if (stopped) controller.abort();
      else current = controller;
    } catch (error) {
      options.log(`watch of ${options.name} failed: ${(error as Error).message}`);
      again();
    }
  }
  void start();
  return {
    stop() {
      stopped = true;
      current?.abort();
    },
  };
}
