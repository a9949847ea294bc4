/** The JSON Schema keyword that asks for an index on a field: `{"type": "string", "maxLength": 100, "x-indexed": true}`. */
export const INDEXED_KEYWORD = 'x-indexed';

/** The parts of an object type's JSON Schema that decide its indexes. */
export type JsonSchemaNode = {
  type?: string | string[];
  maxLength?: number;
  properties?: Record<string, JsonSchemaNode>;
  [INDEXED_KEYWORD]?: unknown;
};

/** Paths (dot-joined) of the properties that a schema marks indexed, nested objects included. */
export function indexedPaths(schema: JsonSchemaNode | undefined, prefix: string[] = []): string[][] {
  const paths: string[][] = [];
  for (const [name, node] of Object.entries(schema?.properties ?? {})) {
    if (!node || typeof node !== 'object') continue;
    const path = [...prefix, name];
    if (node[INDEXED_KEYWORD] === true) paths.push(path);
    if (node.properties) paths.push(...indexedPaths(node, path));
  }
  return paths;
}
