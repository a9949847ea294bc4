import { randomBytes, randomUUID } from 'node:crypto';
import { decodeProtectedHeader, errors, jwtVerify, SignJWT } from 'jose';
import type { Db } from '../db/client.ts';
import { UnauthorizedError } from '../errors.ts';
import { UUID } from '../ids.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import { consumeTicket, currentSigningKey, pruneTickets, rotateSigningKey, verifyingKey, type SigningKeys } from './realtime.repo.ts';
import { createSigningKeySeal } from './signing-key-seal.ts';

const ISSUER = 'svc-realtime';
const AUDIENCE = 'svc-realtime-connect';
/** Tokens signed before keys had ids carry no `kid`: the one key there was, number 1. */
const FIRST_KID = '1';
const KID = /^[1-9]\d{0,8}$/;
const PRUNE_EVERY_MS = 60_000;

/** When the signing key is replaced (at the next negotiation after it), and how long a replaced key still verifies. */
export interface KeyPolicy {
  rotateAfterMs: number;
  /** Longer than a token lives, so that every token signed before a rotation is still accepted. */
  overlapMs: number;
}

/** A day per signing key; a replaced key verifies for ten minutes more. */
export const DEFAULT_KEY_POLICY: KeyPolicy = { rotateAfterMs: 24 * 60 * 60 * 1000, overlapMs: 10 * 60 * 1000 };

/** What a connection token grants: one tenant's events on these channels, once, until it expires. */
export interface ConnectionGrant {
  tenantId: string;
  userId: string;
  channels: string[];
  expiresAt: Date;
  /** The token's own id: the ticket a connection consumes. */
  ticket: string;
}

/**
 * Connection tokens: one-time tickets, JWTs signed with HS256 by keys kept in the database, so
 * that any instance verifies a token another one issued and a ticket one instance took is taken
 * for all. The newest key signs and names itself in the `kid` header; it is replaced after
 * `rotateAfterMs` (or on demand, `rotate`), and a replaced key verifies for `overlapMs` more.
 * Keys are stored sealed with the operator key (`secrets`).
 */
export function createRealtimeTokens(deps: { db: Db; secrets?: SecretBox; keys?: Partial<KeyPolicy>; log?: (message: string, error: unknown) => void }) {
  const { sql } = deps.db;
  const policy = { ...DEFAULT_KEY_POLICY, ...deps.keys };
  const seal = createSigningKeySeal(deps.secrets);
  const freshKey = (id: number) => seal.seal(id, randomBytes(32));
  let lastPrune = 0;

  async function signingKey(): Promise<{ id: number; secret: Uint8Array }> {
    const current = await currentSigningKey(sql);
    const key = current && current.ageMs < policy.rotateAfterMs ? current : (await rotateSigningKey(sql, freshKey, { overlapMs: policy.overlapMs, unlessYoungerThanMs: policy.rotateAfterMs })).current;
    return { id: key.id, secret: seal.open(key.id, key.stored) };
  }

  function kidOf(token: string): string {
    try {
      const { kid = FIRST_KID } = decodeProtectedHeader(token);
      if (typeof kid === 'string' && KID.test(kid)) return kid;
    } catch {
      // not a JWT at all
    }
    throw new UnauthorizedError('invalid realtime token');
  }

  return {
    async issue(grant: Omit<ConnectionGrant, 'expiresAt' | 'ticket'>, ttlSeconds: number): Promise<{ token: string; expiresAt: Date }> {
      const key = await signingKey();
      const expiresAt = new Date((Math.floor(Date.now() / 1000) + ttlSeconds) * 1000);
      const token = await new SignJWT({ tid: grant.tenantId, ch: grant.channels })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: String(key.id) })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(grant.userId)
        .setJti(randomUUID())
        .setIssuedAt()
        .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
        .sign(key.secret);
      return { token, expiresAt };
    },

    /**
     * The grant of a valid token; 401 for one that is expired, tampered with, signed with a
     * retired or unknown key, or not a connection token. It does not consume the ticket.
     */
    async verify(token: string): Promise<ConnectionGrant> {
      const kid = Number(kidOf(token));
      const key = await verifyingKey(sql, kid);
      if (!key) throw new UnauthorizedError('invalid realtime token');
      try {
        const { payload } = await jwtVerify(token, seal.open(kid, key.stored), { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
        const channels = payload.ch;
        if (
          typeof payload.tid !== 'string' ||
          typeof payload.sub !== 'string' ||
          typeof payload.jti !== 'string' ||
          !UUID.test(payload.jti) ||
          !Array.isArray(channels) ||
          !channels.every((c) => typeof c === 'string')
        ) {
          throw new UnauthorizedError('not a realtime connection token');
        }
        if (key.retired) throw new UnauthorizedError('the realtime token was signed with a retired key: negotiate a new one');
        return { tenantId: payload.tid, userId: payload.sub, channels: channels, expiresAt: new Date(payload.exp! * 1000), ticket: payload.jti };
      } catch (error) {
        if (error instanceof UnauthorizedError) throw error;
        if (error instanceof errors.JWTExpired) throw new UnauthorizedError('the realtime token has expired: negotiate a new one');
        if (error instanceof errors.JOSEError) throw new UnauthorizedError('invalid realtime token');
        throw error;
      }
    },

    /**
     * Takes the grant's ticket for one connection; 401 when a connection took it before, on any
     * instance. Once a minute it first deletes the tickets of expired tokens.
     */
    async consume(grant: ConnectionGrant): Promise<void> {
      if (Date.now() - lastPrune > PRUNE_EVERY_MS) {
        lastPrune = Date.now();
        await pruneTickets(sql).catch((error: unknown) => deps.log?.('realtime: pruning expired tickets failed', error));
      }
      if (!(await consumeTicket(sql, grant.ticket, grant.expiresAt))) {
        throw new UnauthorizedError('this realtime token has already been used to connect: a token opens one connection; negotiate a new one');
      }
    },

    /**
     * A new signing key, now. The keys before it verify for the overlap, or not at all with
     * `retirePrevious` (a key that may have leaked). Answers the new key and those still verifying.
     */
    async rotate(options: { retirePrevious?: boolean } = {}): Promise<SigningKeys> {
      return rotateSigningKey(sql, freshKey, { overlapMs: options.retirePrevious ? 0 : policy.overlapMs });
    },

    /** Seals the stored keys that are plain or under a previous operator key; see {@link createSigningKeySeal}. */
    resealStoredKeys: () => seal.resealStored(sql),
  };
}

export type RealtimeTokens = ReturnType<typeof createRealtimeTokens>;
