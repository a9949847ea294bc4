import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';

/** Users are provisioned from token claims on their first call. */
describe('just-in-time user provisioning', () => {
  const newcomer = { sub: randomUUID(), email: `newcomer-${randomUUID().slice(0, 8)}@acme.test`, name: 'New Comer', tenant: 'acme' };
  let stack: TestStack;
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });

  beforeAll(async () => {
    stack = await startTestStack({ devUsers: [...DEV_USERS, newcomer] });
  });
  afterAll(async () => {
    await stack?.close();
    await sql.end();
  });

  it('creates an unknown user from the token claims, without granting any tenant', async () => {
    const before = await sql`select 1 from users where email = ${newcomer.email}`;
    expect(before).toHaveLength(0);
    const response = await stack.request('GET', `${V3}/users/me`, { as: newcomer.email });
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('FORBIDDEN');
    const [user] = await sql<{ subject: string; name: string; lastLoginAt: Date }[]>`
      select subject, name, last_login_at as "lastLoginAt" from users where email = ${newcomer.email}`;
    expect(user).toMatchObject({ subject: newcomer.sub, name: newcomer.name });
    expect(user!.lastLoginAt).toBeInstanceOf(Date);
  });

  it('binds a seeded user to its token subject and records the sign-in time', async () => {
    const response = await stack.request('GET', `${V3}/users/me`, { as: ADMIN });
    expect(response.status).toBe(200);
    const [user] = await sql<{ subject: string }[]>`select subject from users where email = ${ADMIN}`;
    expect(user!.subject).toBe(DEV_USERS.find((u) => u.email === ADMIN)!.sub);
    expect(Date.parse(response.body.lastLoginAt)).toBeGreaterThan(Date.now() - 10 * 60_000);
  });
});
