import { ForbiddenError } from '../errors.ts';

/** Whom a connection serves: a user in a tenant. */
export interface Holder {
  tenantId: string;
  userId: string;
}

/** A holder who may no longer hold a connection, and why: the `revoked` event's reason, or a refused connection's message. */
export interface Revocation {
  holder: Holder;
  reason: string;
}

/** Of these holders, those who lost access (membership, permission, their tenant's capability), in as few queries as it can. */
export type AccessCheck = (holders: Holder[]) => Promise<Revocation[]>;

const keyOf = (holder: Holder) => `${holder.tenantId}|${holder.userId}`;

/**
 * Watches the users of this instance's open connections: every `intervalMs`, one check asks which
 * of them lost access, and the connections of those are revoked with the reason. A failed check
 * is logged and retried at the next interval: connections stay open through a passing database
 * outage.
 */
export function createAccessWatch(deps: { revoked: AccessCheck; intervalMs: number; log?: (message: string, error: unknown) => void }) {
  const watched = new Map<string, { holder: Holder; revokes: Set<(reason: string) => void> }>();
  let timer: NodeJS.Timeout | undefined;
  let checking = false;

  async function check(): Promise<void> {
    if (checking || watched.size === 0) return;
    checking = true;
    try {
      for (const { holder, reason } of await deps.revoked([...watched.values()].map((e) => e.holder))) {
        for (const revoke of watched.get(keyOf(holder))?.revokes ?? []) revoke(reason);
      }
    } catch (error) {
      deps.log?.('realtime: re-checking the access of open connections failed', error);
    } finally {
      checking = false;
    }
  }

  return {
    /** 403, saying why, unless the holder has access now. */
    async assert(holder: Holder): Promise<void> {
      const [revocation] = await deps.revoked([holder]);
      if (revocation) throw new ForbiddenError(revocation.reason);
    },

    /** Calls `revoke` with the reason once the holder loses access; the answer stops watching. */
    watch(holder: Holder, revoke: (reason: string) => void): () => void {
      const key = keyOf(holder);
      const entry = watched.get(key) ?? { holder, revokes: new Set<(reason: string) => void>() };
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
