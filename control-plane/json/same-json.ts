/** JSON text of a value with every object's keys in order: equal JSON values give equal text. */
export function canonicalJson(value: unknown): string {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).sort(([x], [y]) => (x < y ? -1 : 1)).map(([k, v]) => [k, canonical(v)]))
        : value;
  return JSON.stringify(canonical(value));
}

/** Compares two JSON values regardless of key order (jsonb and the Kubernetes API return keys in their own order). */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
