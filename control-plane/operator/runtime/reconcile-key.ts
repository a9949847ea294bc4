import { reconcileDuration } from '../../telemetry/metrics.ts';
import type { CustomObject, StepResult } from '../custom-object.ts';
import { statusOf, type Kube } from '../kube.ts';
import type { Backoff } from './backoff.ts';
import { notingWrites, type EchoSuppression } from './echo-suppression.ts';
import { ensureFinalizer, removeFinalizer } from './finalizers.ts';
import { parseQueueKey, type ControlledKind } from './kind.ts';
import type { ObjectCache } from './object-cache.ts';
import type { RunAgain } from './work-queue.ts';

export interface ReconcileKeyDeps {
  kube: Kube;
  kinds: readonly ControlledKind[];
  cache: ObjectCache;
  echo: EchoSuppression;
  backoff: Backoff;
  /** Notes the followed topics of the object a queue key names. */
  follow: (key: string, topics: string[]) => void;
  /** Whether followed changes are heard of (else objects waiting for one are polled). */
  notified: () => boolean;
  log: (message: string) => void;
}

/** The finalizer on, then `reconcile`; or, for an object being deleted, `finalize`, then the finalizer off. */
async function reconcileObject(kind: ControlledKind, object: CustomObject, kube: Kube): Promise<StepResult> {
  if (object.metadata.deletionTimestamp) {
    const result = await kind.finalize(object, kube);
    if (!result) await removeFinalizer(kube, kind, object);
    return result;
  }
  await ensureFinalizer(kube, kind, object);
  return kind.reconcile(object, kube);
}

/**
 * Reconciles the object a queue key names, from the cache's copy or a read, and says when to run
 * it again: a requeue it asked for, or a retry with backoff after a failure. An object that is gone
 * is forgotten.
 */
export function createKeyReconciler(deps: ReconcileKeyDeps): (key: string) => Promise<RunAgain> {
  const { kube, cache, echo, backoff } = deps;
  const failed = (key: string, error: unknown): RunAgain => {
    const { attempt, delayMs } = backoff.failed(key);
    deps.log(`reconcile ${key} failed (attempt ${attempt}): ${(error as Error).message}`);
    return { delayMs };
  };
  return async (key) => {
    const { kind, name } = parseQueueKey(deps.kinds, key);
    let object: CustomObject;
    try {
      object = cache.get(key) ?? ((await kube.custom.getClusterCustomObject({ group: kind.group, version: kind.version, plural: kind.plural, name })) as CustomObject);
    } catch (error) {
      if (statusOf(error) !== 404) return failed(key, error);
      backoff.reset(key);
      echo.forget(key);
      return undefined;
    }
    const started = performance.now();
    const observe = (outcome: string) => reconcileDuration.observe({ kind: kind.plural, outcome }, (performance.now() - started) / 1000);
    try {
      deps.follow(key, kind.follows?.(object) ?? []);
      const written = echo.begin(key);
      const result = await reconcileObject(kind, object, notingWrites(kube, object, written, cache.keeperFor(key, object, written)));
      observe(result ? 'requeued' : 'done');
      if (!result) return void backoff.reset(key);
      return { delayMs: backoff.requeued(key, result, deps.notified()) };
    } catch (error) {
      observe('failed');
      cache.drop(key);
      return failed(key, error);
    }
  };
}
