import { ForbiddenError } from '../errors.ts';

/** Whom a connection serves: a user in a tenant. */
export interface Holder {
  tenantId: string;
  userId: string;
}

/** Of these holders, those who may still read the tenant's resources (active membership, live tenant, `resources.read`). */
export type StillPermitted = (holders: Holder[]) => Promise<Holder[]>;

/** Why a connection ends when its user lost access: the `revoked` event's reason. */
export const REVOKED_REASON = "the user's membership of the tenant, or its permission to read resources, was removed: this connection is closed";

const keyOf = (holder: Holder) => `${holder.tenantId}|${holder.userId}`;

/**
 * Watches the users of this instance's open connections: every `intervalMs`, one query asks which
 * of them may still read their tenant's resources, and the connections of those who may not are
 * revoked. A failed check is logged and retried at the next interval: connections stay open
 * through a passing database outage.
 */
export function createAccessWatch(deps: { stillPermitted: StillPermitted; intervalMs: number; log?: (message: string, error: unknown) => void }) {
  const watched = new Map<string, { holder: Holder; revokes: Set<() => void> }>();
  let timer: NodeJS.Timeout | undefined;
  let checking = false;

  async function check(): Promise<void> {
    if (checking || watched.size === 0) return;
    checking = true;
    try {
      const entries = [...watched.values()];
      const permitted = new Set((await deps.stillPermitted(entries.map((e) => e.holder))).map(keyOf));
      for (const entry of entries) {
        if (permitted.has(keyOf(entry.holder))) continue;
        for (const revoke of entry.revokes) revoke();
      }
    } catch (error) {
      deps.log?.('realtime: re-checking the access of open connections failed', error);
    } finally {
      checking = false;
    }
  }

  return {
    /** 403 unless the holder may read the tenant's resources now. */
    async assert(holder: Holder): Promise<void> {
      if ((await deps.stillPermitted([holder])).length === 0) {
        throw new ForbiddenError("the token's user is no longer a member of the tenant allowed to read its resources: negotiate as a member");
      }
    },

    /** Calls `revoke` once the holder loses access; the answer stops watching. */
    watch(holder: Holder, revoke: () => void): () => void {
      const key = keyOf(holder);
      const entry = watched.get(key) ?? { holder, revokes: new Set<() => void>() };
      watched.set(key, entry);
      entry.revokes.add(revoke);
      if (!timer) {
        timer = setInterval(() => void check(), deps.intervalMs);
        timer.unref();
      }
      return () => {
        entry.revokes.delete(revoke);
        if (entry.revokes.size === 0 && watched.get(key) === entry) watched.delete(key);
        if (watched.size === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },
  };
}

export type AccessWatch = ReturnType<typeof createAccessWatch>;
