/** The most text one resource's projection holds: a resource is one chunk. */
const MAX_PROJECTION_CHARS = 32_000;

function valueAt(data: Record<string, unknown>, path: string): unknown {
  let value: unknown = data;
  for (const key of path.split('.')) {
    if (!value || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** The words a value contributes: strings, numbers and booleans, also inside arrays and objects. */
function textOf(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (typeof value === 'string') return value.trim() ? [value] : [];
  if (typeof value === 'number' || typeof value === 'boolean') return [String(value)];
  if (Array.isArray(value)) return value.flatMap(textOf);
  if (typeof value === 'object') return Object.values(value).flatMap(textOf);
  return [];
}

/**
 * A resource's search projection: the values of its type's `searchFields`, one line per field in
 * the declared order (the text that is ranked and embedded), and those values by field path (a
 * hit's `fields`). Fields the resource lacks are left out; none present is an empty projection.
 */
export function projectResource(data: Record<string, unknown>, searchFields: readonly string[]): { content: string; fields: Record<string, unknown> } {
  const fields: Record<string, unknown> = {};
  const lines: string[] = [];
  for (const path of searchFields) {
    const value = valueAt(data, path);
    const text = textOf(value);
    if (text.length === 0) continue;
    fields[path] = value;
    lines.push(text.join(' '));
  }
  return { content: lines.join('\n').slice(0, MAX_PROJECTION_CHARS), fields };
}
