import { PERMISSIONS, PLATFORM_PERMISSIONS, platformPermissionsOf } from '../auth/permissions.ts';
import type { Db, Tx } from '../db/client.ts';
import { ForbiddenError, UnauthorizedError } from '../errors.ts';
import { UUID } from '../ids.ts';
import { awaitsFirstSignIn, claimUserByEmail, findUserBySubject, insertUser, listActiveMemberships, recordLogin, type UserRow } from './identity.repo.ts';
import { APP_TOKEN_ELSEWHERE, type Actor, type Identity, type Principal } from './identity.schema.ts';

export interface AppClientBinding {
  tenantId: string;
  scopes: readonly string[] | null;
}

/**
 * Which clients an external identity provider's tokens may come from (decision 0178). Without it
 * (the built-in provider, whose tokens always name their client) every client no tenant registered
 * is one of the platform's own.
 */
export interface ClientPolicy {
  /** The platform's own clients (`AUTH_FIRST_PARTY_CLIENTS`); when given, a token of another client no tenant registered is refused. */
  firstParty?: ReadonlySet<string>;
  /** A token naming no client (neither `client_id` nor `azp`): refused (the default), or one of the platform's own (`AUTH_TOKENS_WITHOUT_CLIENT`). */
  withoutClient: 'refuse' | 'first-party';
}

/** Why a token naming no client is refused. */
export const TOKEN_NAMES_NO_CLIENT =
  'this token names no client (neither client_id nor azp), so the platform cannot tell an app a tenant registered from its own sign-in: the identity provider must name the client in its access tokens';

export interface CallersDeps {
  db: Db;
  /** Which clients' tokens are accepted; see {@link ClientPolicy}. */
  clients?: ClientPolicy;
  /**
   * The tenant that registered the app a client id belongs to, with the scopes (permissions) it was
   * granted, null when unnarrowed; undefined for the platform's own clients.
   */
  appClient?: (clientId: string) => Promise<AppClientBinding | undefined>;
  cacheTtlMs?: number;
  now?: () => number;
}

const NAMED_PERMISSIONS: ReadonlySet<string> = new Set<string>([...PERMISSIONS, ...PLATFORM_PERMISSIONS]);

/**
 * The permissions a token's `scope` claim names, which bound what it may do; undefined when it
 * names none (no claim, or only sign-in scopes such as `openid`, `profile` or `api`), so that it
 * narrows nothing.
 */
export function tokenScopesOf(identity: Identity): ReadonlySet<string> | undefined {
  const named = identity.scopes?.filter((scope) => NAMED_PERMISSIONS.has(scope));
  return named?.length ? new Set(named) : undefined;
}

/** `permissions` within `scopes`, or all of them when `scopes` is not given. */
const within = <P extends string>(permissions: readonly P[], scopes: { has(p: string): boolean } | null | undefined): P[] =>
  scopes ? permissions.filter((p) => scopes.has(p)) : [...permissions];

/**
 * Turns a verified token identity into an Actor in one tenant, or the Principal naming none: the
 * tRPC base procedures' `Callers`. Users are provisioned just in time on their first call (matched
 * by email to a user provisioned ahead, else created), and `lastLoginAt` moves to the token's issue
 * time whenever a newer token is seen. Resolved callers are cached for `cacheTtlMs` per token, so a
 * membership change takes effect within that time (at once in this process for a deleted tenant:
 * see `forgetTenant`).
 */
export function createCallers(deps: CallersDeps) {
  const { db } = deps;
  const ttl = deps.cacheTtlMs ?? 5_000;
  const now = deps.now ?? Date.now;
  const cache = new Map<string, { actor: Actor; expires: number }>();
  const principals = new Map<string, { principal: Principal; expires: number }>();
  const appClients = new Map<string, { binding: AppClientBinding | undefined; expires: number }>();

  /** What a token is bound to: the tenant that registered the app it was issued to, and the app's scopes, if any. */
  async function appClientOf(identity: Identity): Promise<AppClientBinding | undefined> {
    const { clientId } = identity;
    if (!clientId) {
      if (deps.clients?.withoutClient === 'refuse') throw new UnauthorizedError(TOKEN_NAMES_NO_CLIENT);
      return undefined;
    }
    const hit = appClients.get(clientId);
    let binding: AppClientBinding | undefined;
    if (hit && hit.expires > now()) binding = hit.binding;
    else {
      binding = await deps.appClient?.(clientId);
      if (appClients.size > 10_000) appClients.clear();
      appClients.set(clientId, { binding, expires: now() + ttl });
    }
    const firstParty = deps.clients?.firstParty;
    if (!binding && firstParty && !firstParty.has(clientId)) {
      throw new UnauthorizedError(`this token was issued to client "${clientId}", which is neither one of the platform's own clients (AUTH_FIRST_PARTY_CLIENTS) nor an app a tenant registered`);
    }
    return binding;
  }

  /** The token's user, provisioned just in time, with the sign-in time recorded. */
  async function provisionUser(tx: Tx, identity: Identity): Promise<UserRow> {
    let found = await findUserBySubject(tx, identity.sub);
    if (!found) {
      if (!identity.email) throw new UnauthorizedError('token carries no email to provision the user from');
      // A user provisioned ahead is bound only to a token that vouches for the address: anyone can
      // put an unverified address in their account at some identity providers.
      const provisioned =
        (identity.emailVerified === true ? await claimUserByEmail(tx, identity.email, identity.sub) : undefined) ??
        (await insertUser(tx, { subject: identity.sub, email: identity.email, name: identity.name ?? identity.email }));
      if (provisioned) found = { ...provisioned, lastLoginAt: null };
      else {
        found = await findUserBySubject(tx, identity.sub);
        if (!found) {
          if (await awaitsFirstSignIn(tx, identity.email)) {
            throw new ForbiddenError(`the email address ${identity.email} is of a user provisioned ahead, whom only a token saying the address is verified (email_verified) signs in as`);
          }
          throw new ForbiddenError(`another account uses the email address ${identity.email}`);
        }
      }
    }
    const issuedAt = identity.issuedAt ? new Date(identity.issuedAt * 1000) : new Date(now());
    // A newer token's picture becomes the avatar; a token without one leaves it as it is.
    if (!found.lastLoginAt || found.lastLoginAt < issuedAt) await recordLogin(tx, found.id, issuedAt, identity.picture);
    return found;
  }

  async function resolve(identity: Identity, tenantHint: string | undefined): Promise<Actor> {
    // The client first: a token refused for it provisions no user.
    const app = await appClientOf(identity);
    const { user, memberships } = await db.system(async (tx) => {
      const found = await provisionUser(tx, identity);
      return { user: found, memberships: await listActiveMemberships(tx, found.id) };
    });

    const appTenant = app?.tenantId;
    const wanted = tenantHint ?? appTenant ?? identity.tenant;
    const membership = wanted
      ? memberships.find((m) => (UUID.test(wanted) ? m.tenantId === wanted.toLowerCase() : m.tenantSlug === wanted))
      : memberships[0];
    if (!membership) throw new ForbiddenError(wanted ? `no active membership in tenant "${wanted}"` : 'no active tenant membership');
    if (appTenant && membership.tenantId !== appTenant) throw new ForbiddenError(APP_TOKEN_ELSEWHERE);
    return {
      userId: user.id,
      email: user.email,
      tenantId: membership.tenantId,
      tenantSlug: membership.tenantSlug,
      roles: membership.roles,
      // A token acts with its user's permissions within the scopes its app was granted and those it names itself.
      permissions: new Set(within(within(membership.permissions, app?.scopes ? new Set(app.scopes) : undefined), tokenScopesOf(identity))),
    };
  }

  /** What the caches tell tokens apart by, beside subject, issue time and client: the permissions they name. */
  const scopesKey = (identity: Identity) => [...(tokenScopesOf(identity) ?? [])].sort().join(' ');

  return {
    async resolveActor(identity: Identity, tenantHint?: string): Promise<Actor> {
      const key = `${identity.sub}|${identity.issuedAt ?? ''}|${identity.clientId ?? ''}|${scopesKey(identity)}|${tenantHint ?? identity.tenant ?? ''}`;
      const hit = cache.get(key);
      if (hit && hit.expires > now()) return hit.actor;
      const actor = await resolve(identity, tenantHint);
      if (cache.size > 10_000) cache.clear();
      cache.set(key, { actor, expires: now() + ttl });
      return actor;
    },

    /** The token's user without choosing a tenant, with the platform permissions of their platform roles. */
    async resolveUser(identity: Identity): Promise<Principal> {
      const key = `${identity.sub}|${identity.issuedAt ?? ''}|${identity.clientId ?? ''}|${scopesKey(identity)}`;
      const hit = principals.get(key);
      if (hit && hit.expires > now()) return hit.principal;
      const appTenantId = (await appClientOf(identity))?.tenantId;
      const user = await db.system((tx) => provisionUser(tx, identity));
      // An app's token never carries the user's platform roles: the app acts in its tenant alone.
      const platformRoles = appTenantId ? [] : user.platformRoles;
      const principal: Principal = {
        userId: user.id,
        email: user.email,
        ...(identity.emailVerified === true && identity.email ? { verifiedEmail: identity.email } : {}),
        platformRoles,
        // A token naming its scopes carries only the platform permissions among them.
        platformPermissions: new Set(within([...platformPermissionsOf(platformRoles)], tokenScopesOf(identity))),
        ...(appTenantId ? { appTenantId } : {}),
      };
      if (principals.size > 10_000) principals.clear();
      principals.set(key, { principal, expires: now() + ttl });
      return principal;
    },

    /** Drops cached actors of a tenant, so that a deleted tenant stops resolving at once in this process. */
    forgetTenant(tenantId: string): void {
      for (const [key, entry] of cache) if (entry.actor.tenantId === tenantId) cache.delete(key);
    },
  };
}
