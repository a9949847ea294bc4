import type { CustomObject } from '../custom-object.ts';
import type { CopyKeeper } from './echo-suppression.ts';

/**
 * The newest copy of each object while the controller leads, by queue key (an informer's cache):
 * from its watches (in order, so each event is newer than the last) and the answers to its own
 * patches, so that a reconcile needs no read. An object without a copy is read. A copy is dropped
 * when its object is gone, when a reconcile of it fails (the retry reads it afresh) and when
 * leadership ends; finalizer patches carry the copy's resource version, so one made from a copy
 * that is behind is refused.
 */
export function createObjectCache() {
  const latest = new Map<string, CustomObject>();
  return {
    get: (key: string): CustomObject | undefined => latest.get(key),
    /** A watch event: the copy becomes the event's object, or goes with a deleted one. */
    observe(key: string, phase: string, object: CustomObject): void {
      if (phase === 'DELETED') latest.delete(key);
      else latest.set(key, object);
    },
    drop(key: string): void {
      latest.delete(key);
    },
    clear(): void {
      latest.clear();
    },
    /**
     * Keeps the copy up to date with the answers to a reconcile of `read`, which notes its own
     * writes in `written`. An answer replaces the copy only if nothing newer than what this
     * reconcile wrote came meanwhile (a copy dropped meanwhile stays dropped). One that lets a
     * deleted object go (its last finalizer removed) leaves no copy: the object is gone.
     */
    keeperFor(key: string, read: CustomObject, written: ReadonlySet<string>): CopyKeeper {
      return {
        keep(answer) {
          if (answer.metadata.deletionTimestamp && !answer.metadata.finalizers?.length) return void latest.delete(key);
          const current = latest.get(key)?.metadata.resourceVersion;
          // `read` is the object the reconcile works on: its resource version follows its own status writes.
          if (current !== undefined && (current === read.metadata.resourceVersion || written.has(current))) latest.set(key, answer);
        },
        gone: () => void latest.delete(key),
      };
    },
  };
}

export type ObjectCache = ReturnType<typeof createObjectCache>;
