/** RFC 7386 JSON merge patch: objects merge recursively, `null` removes a key, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[key];
      continue;
    }
    const merged = mergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value);
    // Defined, not assigned: a `__proto__` key of parsed JSON stays a key instead of replacing the prototype.
    Object.defineProperty(result, key, { value: merged, enumerable: true, writable: true, configurable: true });
  }
  return result;
}
