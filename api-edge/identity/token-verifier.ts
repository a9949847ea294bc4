import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';

export interface TokenVerifierOptions {
  issuer: string;
  audience: string;
  /** JWKS endpoint of the issuer (fetched and cached). One of `jwksUrl` and `jwks` is required. */
  jwksUrl?: string;
  /** Public JWKS, used as is. */
  jwks?: JSONWebKeySet;
  /** Claim holding the tenant slug. Default `tid`. */
  tenantClaim?: string;
}

export interface VerifiedIdentity {
  sub: string;
  email?: string;
  /** The `email_verified` claim, when the token carries it. */
  emailVerified?: boolean;
  name?: string;
  /** The `picture` claim: the address of the user's image. */
  picture?: string;
  tenant?: string;
  /** The client the token was issued to: its `client_id` claim (RFC 9068), else `azp`. */
  clientId?: string;
  /** The values of the token's `scope` claim (RFC 9068: space-separated), when it carries one. */
  scopes?: string[];
  /** `iat`, Unix epoch seconds. */
  issuedAt?: number;
  /** `exp`, Unix epoch seconds. */
  expiresAt?: number;
  token: string;
}

export type InvalidTokenReason =
  | 'malformed'
  | 'expired'
  | 'not_yet_valid'
  | 'invalid_signature'
  | 'unknown_key'
  | 'algorithm_not_allowed'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'missing_subject'
  | 'keys_unavailable';

const MESSAGES: Record<InvalidTokenReason, string> = {
  malformed: 'malformed token',
  expired: 'token expired',
  not_yet_valid: 'token not yet valid',
  invalid_signature: 'invalid signature',
  unknown_key: 'unknown signing key',
  algorithm_not_allowed: 'algorithm not allowed',
  wrong_issuer: 'wrong issuer',
  wrong_audience: 'wrong audience',
  missing_subject: 'missing subject',
  keys_unavailable: 'signing keys unavailable',
};

/** A bearer token was rejected. `message` is short and safe to show to the caller; it never carries token content. */
export class InvalidTokenError extends Error {
  override readonly name = 'InvalidTokenError';
  readonly reason: InvalidTokenReason;

  constructor(reason: InvalidTokenReason) {
    super(MESSAGES[reason]);
    this.reason = reason;
  }
}

const ALGORITHMS = ['RS256', 'ES256'];
const CLOCK_TOLERANCE_S = 5;

/**
 * Builds a verifier for access tokens (JWT, RS256 or ES256) from one issuer for one audience. Remote keys are
 * cached and refetched when an unknown `kid` shows up. Every failure is an `InvalidTokenError`.
 */
export function createTokenVerifier(opts: TokenVerifierOptions): (token: string) => Promise<VerifiedIdentity> {
  const keys = resolveKeys(opts);
  const tenantClaim = opts.tenantClaim ?? 'tid';

  return async (token) => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: opts.issuer,
        audience: opts.audience,
        algorithms: ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_S,
        // jose checks `exp` only when a token has one: a token without it would never expire.
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      throw new InvalidTokenError(reasonOf(err));
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') throw new InvalidTokenError('missing_subject');

    const identity: VerifiedIdentity = { sub: payload.sub, token };
    const email = stringClaim(payload, 'email');
    const name = stringClaim(payload, 'name');
    const tenant = stringClaim(payload, tenantClaim);
    if (email !== undefined) identity.email = email;
    if (typeof payload.email_verified === 'boolean') identity.emailVerified = payload.email_verified;
    if (name !== undefined) identity.name = name;
    const picture = stringClaim(payload, 'picture');
    if (picture !== undefined) identity.picture = picture;
    if (tenant !== undefined) identity.tenant = tenant;
    const clientId = stringClaim(payload, 'client_id') ?? stringClaim(payload, 'azp');
    if (clientId !== undefined) identity.clientId = clientId;
    const scopes = scopesOf(payload.scope);
    if (scopes !== undefined) identity.scopes = scopes;
    if (typeof payload.iat === 'number') identity.issuedAt = payload.iat;
    if (typeof payload.exp === 'number') identity.expiresAt = payload.exp;
    return identity;
  };
}

function resolveKeys(opts: TokenVerifierOptions): JWTVerifyGetKey {
  if (opts.jwks) return createLocalJWKSet(opts.jwks);
  if (opts.jwksUrl) return createRemoteJWKSet(new URL(opts.jwksUrl));
  throw new TypeError('createTokenVerifier needs jwksUrl or jwks');
}

function stringClaim(payload: JWTPayload, claim: string): string | undefined {
  const value = payload[claim];
  return typeof value === 'string' ? value : undefined;
}

/** The values of a `scope` claim: a space-separated string (RFC 9068), or the list some providers send. */
function scopesOf(claim: unknown): string[] | undefined {
  if (typeof claim === 'string') return claim.split(/\s+/).filter(Boolean);
  if (Array.isArray(claim) && claim.every((value) => typeof value === 'string')) return claim.filter(Boolean);
  return undefined;
}

function reasonOf(err: unknown): InvalidTokenReason {
  if (err instanceof errors.JWTExpired) return 'expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    switch (err.claim) {
      case 'aud':
        return 'wrong_audience';
      case 'iss':
        return 'wrong_issuer';
      case 'nbf':
      case 'iat':
        return 'not_yet_valid';
      case 'sub':
        return 'missing_subject';
      default:
        return 'malformed';
    }
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'invalid_signature';
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) return 'unknown_key';
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) return 'algorithm_not_allowed';
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) return 'keys_unavailable';
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid || err instanceof errors.JWKInvalid) {
    return 'malformed';
  }
  if (err instanceof errors.JOSEError && err.code !== 'ERR_JOSE_GENERIC') return 'malformed';
  // A generic JOSEError (non-200 JWKS response) or a fetch failure: the keys could not be loaded.
  return 'keys_unavailable';
}

/**
 * Remembers tokens that verified, until they expire (at most `maxAgeMs`), so a busy client's token
 * is checked cryptographically once rather than on every request. Failures are never cached.
 */
export function withVerificationCache(
  verify: (token: string) => Promise<VerifiedIdentity>,
  options: { maxEntries?: number; maxAgeMs?: number; now?: () => number } = {},
): (token: string) => Promise<VerifiedIdentity> {
  const maxEntries = options.maxEntries ?? 10_000;
  const maxAgeMs = options.maxAgeMs ?? 5 * 60_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { identity: VerifiedIdentity; until: number }>();
  return async (token) => {
    const hit = cache.get(token);
    if (hit && hit.until > now()) return hit.identity;
    const identity = await verify(token);
    const until = Math.min(now() + maxAgeMs, identity.expiresAt ? identity.expiresAt * 1000 : Infinity);
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
    cache.set(token, { identity, until });
    return identity;
  };
}
