import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/client.ts';
import type { Identity } from '../identity/identity.schema.ts';
import { deleteExpiredSessions, deleteSession, findLiveSession, insertSession } from './sessions.repo.ts';
import type { CreateSessionInput } from './sessions.schema.ts';

const hash = (sessionId: string) => createHash('sha256').update(sessionId).digest('base64url');

export type SessionsService = ReturnType<typeof createSessionsService>;

/**
 * Server-side browser sessions: the tokens stay in PostgreSQL, the browser holds a random id
 * (256 bits) of which only the hash is stored. A session lives as long as its access token.
 */
export function createSessionsService(deps: { db: Db }) {
  const { db } = deps;
  return {
    async create(identity: Identity, input: CreateSessionInput): Promise<{ sessionId: string }> {
      const sessionId = randomBytes(32).toString('base64url');
      await db.system(async (tx) => {
        await deleteExpiredSessions(tx);
        await insertSession(tx, { ...input, idHash: hash(sessionId), subject: identity.sub, expiresAt: new Date(input.expiresAt * 1000) });
      });
      return { sessionId };
    },

    async resolve(sessionId: string): Promise<{ accessToken: string; idToken: string | null } | null> {
      return (await db.system((tx) => findLiveSession(tx, hash(sessionId)))) ?? null;
    },

    async remove(sessionId: string): Promise<void> {
      await db.system((tx) => deleteSession(tx, hash(sessionId)));
    },
  };
}
