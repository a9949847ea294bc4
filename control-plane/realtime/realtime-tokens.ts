import { randomBytes, randomUUID } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import type { Db } from '../db/client.ts';
import { UnauthorizedError } from '../errors.ts';
import { signingKey } from './realtime.repo.ts';

const ISSUER = 'svc-realtime';
const AUDIENCE = 'svc-realtime-connect';

/** What a connection token grants: one tenant's events on these channels, until it expires. */
export interface ConnectionGrant {
  tenantId: string;
  userId: string;
  channels: string[];
  expiresAt: Date;
}

/**
 * Connection tokens: JWTs signed with HS256 by a key kept in the database, so that any instance
 * verifies a token another one issued, without a setting every instance must share.
 */
export function createRealtimeTokens(deps: { db: Db }) {
  let key: Promise<Uint8Array> | undefined;
  const keyOf = () => (key ??= signingKey(deps.db.sql, randomBytes(32)).catch((error: unknown) => ((key = undefined), Promise.reject(error))));

  return {
    async issue(grant: Omit<ConnectionGrant, 'expiresAt'>, ttlSeconds: number): Promise<{ token: string; expiresAt: Date }> {
      const expiresAt = new Date((Math.floor(Date.now() / 1000) + ttlSeconds) * 1000);
      const token = await new SignJWT({ tid: grant.tenantId, ch: grant.channels })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(grant.userId)
        .setJti(randomUUID())
        .setIssuedAt()
        .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
        .sign(await keyOf());
      return { token, expiresAt };
    },

    /** The grant of a valid token; 401 for one that is expired, tampered with or not a connection token. */
    async verify(token: string): Promise<ConnectionGrant> {
      try {
        const { payload } = await jwtVerify(token, await keyOf(), { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
        const channels = payload.ch;
        if (typeof payload.tid !== 'string' || typeof payload.sub !== 'string' || !Array.isArray(channels) || !channels.every((c) => typeof c === 'string')) {
          throw new UnauthorizedError('not a realtime connection token');
        }
        return { tenantId: payload.tid, userId: payload.sub, channels: channels as string[], expiresAt: new Date(payload.exp! * 1000) };
      } catch (error) {
        if (error instanceof UnauthorizedError) throw error;
        if (error instanceof errors.JWTExpired) throw new UnauthorizedError('the realtime token has expired: negotiate a new one');
        if (error instanceof errors.JOSEError) throw new UnauthorizedError('invalid realtime token');
        throw error;
      }
    },
  };
}

export type RealtimeTokens = ReturnType<typeof createRealtimeTokens>;
