/**
 * A tenant's type that declares `status` and `budget` in `indexes`, with the built-in project's
 * schema: the lists of bench:resources and bench:v4 that declared indexes must serve.
 */
export const INDEXED_TYPE = { name: 'IndexedProject', indexes: ['status', 'budget'] };

/** Creates the tenant's type with declared indexes (published, the project's schema); answers its key. */
export async function createIndexedType(url: string, token: string): Promise<string> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const types = (await (await fetch(`${url}/v4/data/resources/object-types`, { headers })).json()) as { data: Array<{ key: string; schema: object }> };
  const project = types.data.find((t) => t.key === 'project');
  if (!project) throw new Error('the built-in project type is missing');
  const created = await fetch(`${url}/v4/data/resources/object-types`, { method: 'POST', headers, body: JSON.stringify({ ...INDEXED_TYPE, schema: project.schema, status: 'published' }) });
  const body = (await created.json()) as { key?: string };
  if (created.status !== 201 || !body.key) throw new Error(`creating ${INDEXED_TYPE.name} answered ${created.status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body.key;
}

/** Creates the indexes the tenant's types declare (the storage's sync-schema, which also analyses the statistics it makes). */
export async function syncIndexes(url: string, token: string, tenantId: string, log: (message: string) => void): Promise<void> {
  const synced = await fetch(`${url}/v4/data/resources/${tenantId}/storage/sync-schema`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ backend: 'postgresql' }),
  });
  const body = (await synced.json()) as { changes?: Array<{ action: string; field: string; name: string }> };
  if (synced.status !== 200) throw new Error(`sync-schema answered ${synced.status}: ${JSON.stringify(body).slice(0, 300)}`);
  log(`declared indexes: ${(body.changes ?? []).map((c) => `${c.action} ${c.name} (${c.field})`).join(', ') || 'none changed'}`);
}
