import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../control-plane/contracts.ts';
import { toErrorResponse } from '../errors.ts';
import { buildOpenApiDocument, openApiPath } from '../openapi/document.ts';
import { V4_BASE } from './bases.ts';
import { renameBodyFields, renameQueryParams, withDocumentedField } from './field-aliases.ts';

import { V4_ROUTES } from './v4/index.ts';

type Json = Record<string, any>;
const doc: Json = buildOpenApiDocument('v4');
const schemas = doc.components.schemas as Record<string, Json>;
const deref = (schema: Json | undefined) => (schema?.$ref ? schemas[String(schema.$ref).split('/').pop()!] : schema);
const operationOf = (method: string, path: string) => doc.paths[openApiPath(path)][method.toLowerCase()] as Json;
const bodyOf = (operation: Json) => deref(operation.requestBody?.content?.['application/json']?.schema);

const renamed = V4_ROUTES.filter((route) => route.aliases).flatMap((route) =>
  Object.entries(route.aliases!).map(([name, former]) => ({ route: `${route.method} ${V4_BASE}${route.path}`, method: route.method, path: route.path, name, former, inQuery: !!route.input.query?.[name] })),
);

/** v4 request fields are snake_case; the camelCase names routes shipped with are deprecated aliases (field-aliases.ts). */
describe('v4 request field names', () => {
  it('renames fields', () => expect(renamed.length).toBeGreaterThan(20));

  it.each(renamed)('$route takes $name, and $former as its deprecated alias', ({ method, path, name, former, inQuery }) => {
    const aliases = { [name]: former };
    expect(renameBodyFields({ [name]: 'x', other: 1 }, aliases)).toEqual({ [former]: 'x', other: 1 });
    expect(renameBodyFields({ [former]: 'x' }, aliases)).toEqual({ [former]: 'x' });
    expect(renameBodyFields({ [name]: ['x'], [former]: ['x'] }, aliases)).toEqual({ [former]: ['x'] });
    expect(() => renameBodyFields({ [name]: 'x', [former]: 'y' }, aliases)).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR', details: expect.objectContaining({ field: name }) }));
    // An input error on the procedure's name names the documented field.
    const error = withDocumentedField(ValidationError.field(`${former}.0`, 'must be a string'), aliases);
    expect(toErrorResponse(error).body.error).toMatchObject({ message: `${name}.0 must be a string`, details: { field: `${name}.0`, issue: 'must be a string' } });

    const operation = operationOf(method, path);
    if (inQuery) {
      const url = (query: string) => new URL(`http://edge.test/v4${path}?${query}`);
      expect(renameQueryParams(url(`${name}=true&a=1`), aliases)!.searchParams.get(former)).toBe('true');
      expect(renameQueryParams(url(`${former}=true`), aliases)).toBeUndefined();
      expect(() => renameQueryParams(url(`${name}=true&${former}=false`), aliases)).toThrow(ValidationError);
      const params = operation.parameters as Json[];
      expect(params.find((p) => p.name === name && p.in === 'query')?.deprecated).toBeUndefined();
      expect(params.find((p) => p.name === former && p.in === 'query')).toMatchObject({ deprecated: true, required: false });
    }
    const body = bodyOf(operation);
    if (body?.properties?.[former]) {
      expect(body.properties[name]).toBeDefined();
      expect(body.properties[name].deprecated).toBeUndefined();
      expect(body.properties[former]).toMatchObject({ deprecated: true, description: expect.stringContaining(`\`${name}\``) });
      expect(body.required ?? []).not.toContain(former);
    } else {
      expect(inQuery, `${name} is neither a query parameter nor a body field of ${method} ${path}`).toBe(true);
    }
  });

  it('names every field of every v4 request in snake_case, but for deprecated aliases', () => {
    const camel: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const p of (operation.parameters ?? []) as Json[]) if (p.in === 'query' && /[A-Z]/.test(p.name) && !p.deprecated) camel.push(`${method} ${path} ?${p.name}`);
        for (const content of Object.values((operation.requestBody?.content ?? {}) as Record<string, Json>)) {
          for (const [name, property] of Object.entries((deref(content.schema)?.properties ?? {}) as Record<string, Json>)) {
            if (/[A-Z]/.test(name) && !property.deprecated) camel.push(`${method} ${path} ${name}`);
          }
        }
      }
    }
    expect(camel).toEqual([]);
  });
});
