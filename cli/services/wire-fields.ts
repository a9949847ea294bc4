/** `appKey` -> `app_key`. */
const snakeOf = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/**
 * The fields as v4 takes them in a request, snake_case (`app_key`, `dry_run`): the client's own
 * objects keep their camelCase names, and only the wire is snake_case. Fields left undefined are
 * left out.
 */
export function snakeCaseFields(fields: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined).map(([name, value]) => [snakeOf(name), value]));
}
