import { describe, expect, it } from 'vitest';
import { kebabCase } from './apps.schema.ts';

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
