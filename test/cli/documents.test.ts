import { execa } from 'execa';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { createDocsTenant, type DocsTenant } from '../harness/documents.ts';
import { startTestStack, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';
import { normalise, svc, SVC_BIN } from './svc.ts';

const FIXTURES = fileURLToPath(new URL('../../control-plane/extract/fixtures/', import.meta.url));
const DOCS = '/v4/data/documents';

/** `svc docs upload|classify|index` against the running platform: multipart uploads sent as the file is read, records, indexing jobs. */
describe('svc docs', { timeout: 240_000 }, () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let team: DocsTenant;
  let home: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    team = await createDocsTenant(sql, 'team', 'clidocs');
    stack = await startTestStack({ devUsers: [...DEV_USERS, team.admin] });
    home = await mkdtemp(join(tmpdir(), 'svc-home-'));
    env = { HOME: home, SVC_TOKEN: await stack.token(team.admin.email), BASE_URL_PUBLIC_API: stack.url, SVC_TENANT_ID: team.id };
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  const record = (id: string) => stack.request('GET', `${DOCS}/records/${id}?tenant_id=${team.id}`, { as: team.admin.email });

  it('uploads a document (processing_mode=full), which its job classifies and indexes', async () => {
    const file = join(home, 'résumé notes.txt');
    await copyFile(join(FIXTURES, 'sample.txt'), file);
    const uploaded = await svc(['docs', 'upload', file, '--format', 'json'], env);
    expect(uploaded.exitCode, uploaded.stdout + uploaded.stderr).toBe(0);
    expect(uploaded.json.data).toHaveLength(1);
    const [document] = uploaded.json.data;
    // The name is sent in UTF-8 (filename*), and arrives whole.
    expect(document).toMatchObject({ filename: 'résumé notes.txt', status: 'uploaded', jobId: expect.any(String), storagePath: `tenants/${team.id}/documents/${document.id}/original` });
    const done = await until(() => record(document.id), (r) => r.body.status === 'ready' || r.body.status === 'failed', 120_000);
    expect(done.body).toMatchObject({ status: 'ready', indexed: true, classification: { category: expect.any(String) } });
    expect(done.body.chunkCount).toBeGreaterThan(0);

    const text = await svc(['docs', 'upload', join(FIXTURES, 'sample.md'), '--tenant-id', team.slug], { ...env, SVC_TENANT_ID: '' });
    expect(text.exitCode, text.stderr).toBe(0);
    expect(normalise(text.stdout)).toMatch(/^ID\s+FILE\s+STATUS\s+CATEGORY\s+JOB\n<uuid>\s+sample\.md\s+uploaded\s+-\s+<uuid>\n$/);
  });

  it('classifies a document (processing_mode=classification) and keeps it unindexed; docs index then indexes it', async () => {
    const classified = await svc(['docs', 'classify', join(FIXTURES, 'sample.xlsx'), '--format', 'json'], env);
    expect(classified.exitCode, classified.stdout + classified.stderr).toBe(0);
    const [document] = classified.json.data;
    expect(document).toMatchObject({ filename: 'sample.xlsx', status: 'ready', indexed: false, chunkCount: 0, classification: { category: 'spreadsheet' } });
    expect((await record(document.id)).body).toEqual(document);

    const submitted = await svc(['docs', 'index', document.id, '--format', 'json'], env);
    expect(submitted.exitCode, submitted.stdout + submitted.stderr).toBe(0);
    expect(submitted.json).toMatchObject({ documentId: document.id, jobId: expect.any(String), state: 'queued', index: true });

    const other = await svc(['docs', 'classify', join(FIXTURES, 'sample.csv'), '--format', 'json'], env);
    const waited = await svc(['docs', 'index', other.json.data[0].id, '--wait', '--format', 'json'], env);
    expect(waited.exitCode, waited.stdout + waited.stderr).toBe(0);
    expect(waited.json).toMatchObject({ documentId: other.json.data[0].id, state: 'completed', chunks: expect.any(Number), error: null });
    expect((await record(other.json.data[0].id)).body).toMatchObject({ indexed: true, jobId: waited.json.jobId });
    const waitedText = await svc(['docs', 'index', other.json.data[0].id, '--wait'], env);
    expect(waitedText.stdout).toMatch(/^state\s+completed$/m);
  });

  it('refuses what it cannot send, and names what the platform does not have', async () => {
    const unknown = await svc(['docs', 'index', '00000000-0000-4000-8000-000000000000', '--format', 'json'], env);
    expect(unknown.json.error).toMatchObject({ code: 'E202', exitCode: 5 });
    const missing = await svc(['docs', 'upload', join(home, 'nope.pdf'), '--format', 'json'], { ...env, BASE_URL_PUBLIC_API: 'http://127.0.0.1:9' });
    expect(missing.json.error).toMatchObject({ code: 'E305', exitCode: 2 });
    const folder = await svc(['docs', 'classify', home, '--format', 'json'], { ...env, BASE_URL_PUBLIC_API: 'http://127.0.0.1:9' });
    expect(folder.json.error).toMatchObject({ code: 'E305', message: expect.stringContaining('is not a file') });
    const binary = join(home, 'blob.bin');
    await writeFile(binary, new Uint8Array([0, 1, 2, 0, 0, 255, 254]));
    const refused = await svc(['docs', 'upload', binary, '--format', 'json'], env);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.json.error.code).toMatch(/^E(203|302|305)$/);
  });

  it('draws a progress bar on stderr when it is a terminal, and none otherwise', async () => {
    // `script` gives the client a terminal; its output is what the terminal showed.
    const file = join(FIXTURES, 'sample.txt');
    const line = ['node', SVC_BIN, 'docs', 'classify', file].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
    const inTerminal = await execa('script', ['-qec', line, '/dev/null'], { env: { PATH: process.env['PATH'], ...env }, extendEnv: false, reject: false });
    expect(inTerminal.exitCode, inTerminal.stdout).toBe(0);
    expect(inTerminal.stdout).toMatch(/Classifying sample\.txt \[[^\]]*\] 100% \d+\/\d+ bytes/);
    const piped = await svc(['docs', 'classify', file], env);
    expect(piped.exitCode, piped.stderr).toBe(0);
    expect(piped.stderr).toBe('');
  });
});
