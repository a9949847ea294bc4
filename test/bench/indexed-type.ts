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

/**
 * Waits until the indexes the tenant's types declare are built: declaring them starts the build in
 * the background, and each type's `indexBuild` says when it is done. Then analyses the table, so
 * that the rows loaded meanwhile have statistics.
 */
export async function awaitIndexes(url: string, token: string, tenantId: string, key: string, log: (message: string) => void): Promise<void> {
  const started = Date.now();
  for (;;) {
    const listed = await fetch(`${url}/v4/data/resources/object-types?tenant_id=${tenantId}`, { headers: { authorization: `Bearer ${token}` } });
    const types = (await listed.json()) as { data?: Array<{ key: string; indexBuild?: { state: string; pending: string[]; error: string | null } }> };
    const build = types.data?.find((t) => t.key === key)?.indexBuild;
    if (build?.state === 'ready') break;
    if (build?.state === 'failed') throw new Error(`building the indexes of ${key} failed: ${build.error}`);
    if (Date.now() - started > 600_000) throw new Error(`the indexes of ${key} were not built within 10 minutes: ${JSON.stringify(build)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  log(`declared indexes of ${key} built in the background in ${((Date.now() - started) / 1000).toFixed(1)} s after loading`);
}
