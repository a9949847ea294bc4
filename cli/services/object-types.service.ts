import { access, mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { CliError } from '../errors.ts';
import type { Answer, RequestBody, Schemas } from '../api/wire.ts';
import type { ApiClient } from './api-client.ts';
import { GENERATED_FILE, OBJECT_TYPES_FILE } from './object-types.constants.ts';
import { snakeCaseFields } from './wire-fields.ts';
import { importTypeScript } from './ts-module.ts';

/**
 * An object type as the project declares it: the body of `POST /v4/data/resources/object-types`,
 * without a tenant, its fields named in camelCase (`searchFields`) as project files write them; the
 * request names them in snake_case.
 */
export type ObjectTypeDefinition = Omit<RequestBody<'createObjectType'>, 'tenant_id' | 'search_fields' | 'file_properties'>;

/** An object type as the platform returns it. */
export type RemoteObjectType = Schemas['ObjectType'];

export { GENERATED_FILE, OBJECT_TYPES_FILE };

const PASCAL_NAME = /^[A-Z][A-Za-z0-9]{0,99}$/;
const KEBAB_KEY = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_-]{0,63}(\.[A-Za-z_][A-Za-z0-9_-]{0,63}){0,7}$/;
const RESERVED_KEYS = ['storage', 'query', 'search', 'object-types', 'schema'];
/** The fields a definition may hold, compared by diff and sent by seed. */
const FIELDS = ['name', 'schema', 'status', 'indexes', 'searchFields', 'actions', 'fileProperties'] as const;

/** `PurchaseOrder` -> `purchase-order`, as the platform derives a key. */
export const keyOf = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/([A-Z])([A-Z][a-z])/g, '$1-$2').toLowerCase();

/** Loads the project's object types (`export const objectTypes = [...]` or a default export); E004 when missing or not a list. */
export async function loadObjectTypes(cwd = process.cwd()): Promise<{ file: string; types: ObjectTypeDefinition[] }> {
  const file = resolve(cwd, OBJECT_TYPES_FILE);
  try {
    await access(file);
  } catch {
    throw new CliError('E004');
  }
  let module: { objectTypes?: unknown; default?: { objectTypes?: unknown; default?: unknown } };
  try {
    module = await importTypeScript<typeof module>(file);
  } catch (error) {
    throw new CliError('E004', {}, { cause: error });
  }
  const types = module.objectTypes ?? module.default?.objectTypes ?? module.default?.default ?? module.default;
  if (!Array.isArray(types)) throw new CliError('E004');
  return { file, types: types as ObjectTypeDefinition[] };
}

/** What is wrong with the definitions, one line each (empty when they are valid). */
export function validateObjectTypes(types: ObjectTypeDefinition[]): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  types.forEach((type, i) => {
    const at = `objectTypes[${i}]${typeof type?.name === 'string' ? ` (${type.name})` : ''}`;
    if (!type || typeof type !== 'object') return problems.push(`${at}: must be an object`);
    for (const field of Object.keys(type)) if (!['key', ...FIELDS].includes(field)) problems.push(`${at}.${field}: is not a field of an object type`);
    if (typeof type.name !== 'string' || !PASCAL_NAME.test(type.name)) problems.push(`${at}.name: must be PascalCase (PurchaseOrder)`);
    const key = type.key ?? (typeof type.name === 'string' ? keyOf(type.name) : undefined);
    if (type.key !== undefined && (typeof type.key !== 'string' || !KEBAB_KEY.test(type.key))) problems.push(`${at}.key: must be kebab-case (purchase-order)`);
    if (key && RESERVED_KEYS.includes(key)) problems.push(`${at}.key: ${key} names a route of the data API`);
    if (key) {
      if (seen.has(key)) problems.push(`${at}: key ${key} is also the key of ${seen.get(key)}`);
      seen.set(key, at);
    }
    const schema = type.schema as { type?: unknown; properties?: unknown } | undefined;
    if (!schema || typeof schema !== 'object' || schema.type !== 'object') problems.push(`${at}.schema: must describe an object ("type": "object")`);
    if (type.status !== undefined && !['draft', 'published'].includes(type.status)) problems.push(`${at}.status: must be draft or published`);
    for (const [field, max] of [['indexes', 20], ['searchFields', 50]] as const) {
      const list = type[field];
      if (list === undefined) continue;
      if (!Array.isArray(list) || list.length > max || !list.every((f) => typeof f === 'string' && FIELD_PATH.test(f))) {
        problems.push(`${at}.${field}: must be a list of at most ${max} field paths`);
      }
    }
  });
  return problems;
}

export interface TypeChange {
  action: 'create' | 'update' | 'unchanged';
  key: string;
  name: string;
  objectTypeId?: string;
  /** The fields that differ (update). */
  fields: Array<(typeof FIELDS)[number]>;
}

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v));

const DEFAULTS = { status: 'published', indexes: [], searchFields: [], actions: {}, fileProperties: {} } as const;

/** What seeding would change: each local type is created, updated (the fields that differ) or unchanged. Remote types are never removed. */
export function planChanges(local: ObjectTypeDefinition[], remote: RemoteObjectType[]): TypeChange[] {
  return local.map((type) => {
    const key = type.key ?? keyOf(type.name);
    const existing = remote.find((r) => !r.builtIn && r.key === key);
    if (!existing) return { action: 'create', key, name: type.name, fields: [] };
    const fields = FIELDS.filter((f) => canonical(type[f] ?? (DEFAULTS as Record<string, unknown>)[f]) !== canonical(existing[f]));
    return { action: fields.length ? 'update' : 'unchanged', key, name: type.name, objectTypeId: existing.objectTypeId, fields };
  });
}

/** TypeScript of the types a tenant sees: their definitions, and an interface of each one's data. */
export function generatedSource(types: RemoteObjectType[]): string {
  const tsType = (schema: any): string => {
    if (!schema || typeof schema !== 'object') return 'unknown';
    if (Array.isArray(schema.enum)) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
    switch (schema.type) {
      case 'string':
        return 'string';
      case 'number':
      case 'integer':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'array':
        return `Array<${tsType(schema.items)}>`;
      case 'object':
        return schema.properties ? `{ ${fieldsOf(schema).join(' ')} }` : 'Record<string, unknown>';
      default:
        return 'unknown';
    }
  };
  const fieldsOf = (schema: any): string[] =>
    Object.entries(schema.properties ?? {}).map(([name, property]) => `${JSON.stringify(name)}${(schema.required ?? []).includes(name) ? '' : '?'}: ${tsType(property)};`);
  const definitions = types.map(({ name, key, schema, status, indexes, searchFields, actions, fileProperties }) => ({ name, key, schema, status, indexes, searchFields, actions, fileProperties }));
  return [
    '// Generated by `svc types pull` from the platform\'s object types; do not edit.',
    '',
    ...types.flatMap((t) => [`export interface ${t.name}Data {`, ...fieldsOf(t.schema).map((f) => `  ${f}`), '}', '']),
    `export const objectTypes = ${JSON.stringify(definitions, null, 2)} as const;`,
    '',
  ].join('\n');
}

/** Object types over v4, for the tenant named (its id or slug) or the caller's active one. */
export function createObjectTypesService(api: ApiClient) {
  const query = (tenant?: string) => (tenant ? { tenant_id: tenant } : {});
  const list = async (tenant?: string) => (await api.request<Answer<'listObjectTypes'>>('GET', '/v4/data/resources/object-types', { query: query(tenant) })).body.data;
  return {
    list,

    async diff(local: ObjectTypeDefinition[], tenant?: string): Promise<{ tenant: string | null; changes: TypeChange[] }> {
      return { tenant: tenant ?? null, changes: planChanges(local, await list(tenant)) };
    },

    /** Creates and updates the tenant's types to match `local`, then reads them back to check that nothing is left to change. */
    async seed(local: ObjectTypeDefinition[], options: { tenant?: string; dryRun: boolean }) {
      const changes = planChanges(local, await list(options.tenant));
      if (!options.dryRun) {
        for (const change of changes) {
          const type = local.find((t) => (t.key ?? keyOf(t.name)) === change.key)!;
          if (change.action === 'create') {
            await api.request('POST', '/v4/data/resources/object-types', { query: query(options.tenant), body: snakeCaseFields(type), subject: `Tenant ${options.tenant}` });
          } else if (change.action === 'update') {
            const body = snakeCaseFields(Object.fromEntries(change.fields.map((f) => [f, type[f] ?? (DEFAULTS as Record<string, unknown>)[f]]))) as RequestBody<'updateObjectType'>;
            await api.request('PATCH', `/v4/data/resources/object-types/${encodeURIComponent(change.objectTypeId!)}`, {
              query: query(options.tenant),
              body,
              subject: `Object type ${change.key}`,
            });
          }
        }
        const left = planChanges(local, await list(options.tenant)).filter((c) => c.action !== 'unchanged');
        if (left.length) throw new CliError('E203', { details: `object types did not converge: ${left.map((c) => `${c.key} (${c.action})`).join(', ')}` });
      }
      return { tenant: options.tenant ?? null, dryRun: options.dryRun, converged: !options.dryRun, changes };
    },

    /** Writes the generated TypeScript of the tenant's types to `output`. */
    async pull(output: string, tenant?: string): Promise<{ output: string; types: string[] }> {
      const types = await list(tenant);
      const file = resolve(output);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, generatedSource(types));
      return { output: file, types: types.map((t) => t.key) };
    },
  };
}
