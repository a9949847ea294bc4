/** Step configuration templates. Pure: the execution workflow uses it too. */
type Json = Record<string, unknown>;
const TEMPLATE = /^\{\{\s*input\.([A-Za-z0-9_.]+)\s*\}\}$/;

function lookup(input: Json, path: string): unknown {
  return path.split('.').reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Json)[key] : undefined), input);
}

/** Replaces `{{input.<path>}}` string values with the input's value; keys whose value is missing are dropped. */
export function applyInput(config: Json, input: Json): Json {
  const result: Json = {};
  for (const [key, value] of Object.entries(config)) {
    if (typeof value === 'string') {
      const match = TEMPLATE.exec(value);
      const resolved = match ? lookup(input, match[1]!) : value;
      if (resolved !== undefined && resolved !== null) result[key] = resolved;
    } else if (value && typeof value === 'object' && !Array.isArray(value)) {
      result[key] = applyInput(value as Json, input);
    } else {
      result[key] = value;
    }
  }
  return result;
}

/** The longest durable wait a `delay` step may ask for. */
export const MAX_DELAY_MS = 86_400_000;

/** A `delay` step's wait in milliseconds (its `ms`, with the input applied), within 0..MAX_DELAY_MS. */
export function delayMs(config: Json, input: Json): number {
  return Math.min(Math.max(0, Number(applyInput(config, input).ms ?? 0) || 0), MAX_DELAY_MS);
}
