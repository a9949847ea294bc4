import { describe, expect, it } from 'vitest';
import { CreateAppInputSchema, kebabCase } from './apps.schema.ts';

describe('kebabCase (default app keys and child tenant slugs)', () => {
  it.each([
    ['Field Service Portal', 'field-service-portal'],
    ['  Field   Service!  ', 'field-service'],
    ['MyApp', 'my-app'],
    ['HTTPServer v2', 'http-server-v2'],
    ['Café Crème', 'cafe-creme'],
    ['under_score.and/slash', 'under-score-and-slash'],
    ['!!!', ''],
    ['x'.repeat(70), 'x'.repeat(63)],
    [`${'a'.repeat(62)} b`, 'a'.repeat(62)],
  ])('%s -> %s', (name, key) => {
    expect(kebabCase(name)).toBe(key);
  });
});

describe('CreateAppInputSchema', () => {
  it('refuses a child tenant slug that has the form of a tenant id', () => {
    const parsed = CreateAppInputSchema.safeParse({ name: 'Shop', childTenant: { name: 'Shop', slug: '0b7e2c4a-1f3d-4e5a-9b8c-7d6e5f4a3b2c' } });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['childTenant.slug', 'must not have the form of a tenant id (a UUID)']]);
  });
});
