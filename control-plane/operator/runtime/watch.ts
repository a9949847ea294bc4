import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { CustomObject } from '../custom-object.ts';

/** How long a watch that ended waits before it starts again. */
const RESTART_AFTER_MS = 1_000;

/**
 * Watches the custom objects at `path` (`name` in logs) until stopped: a watch that ends (the API server closes
 * watches after a while) or fails to start is started again a second later. A watch started
 * afresh lists every object again as ADDED.
 */
export function keepWatching(
  kubeConfig: KubeConfig,
  path: string,
  onEvent: (phase: string, object: CustomObject) => void,
  options: { name: string; log(message: string): void },
): { stop(): void } {
  let stopped = false;
  let current: AbortController | undefined;
  const again = () => {
    if (!stopped) setTimeout(() => void start(), RESTART_AFTER_MS).unref();
  };
  async function start(): Promise<void> {
    if (stopped) return;
    try {
      const controller = await new Watch(kubeConfig).watch(path, {}, onEvent, again);
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
