/**
 * The path (`a.b.0`) of the first string or object key in `value` that holds the NUL character,
 * which PostgreSQL text and `jsonb` cannot store; undefined when there is none.
 */
export function pathToNul(value: unknown, path: string[] = []): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path.join('.') : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    const at = [...path, key];
    if (key.includes('\u0000')) return at.join('.');
    const found = pathToNul(item, at);
    if (found !== undefined) return found;
  }
  return undefined;
}
