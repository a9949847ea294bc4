import { randomBytes, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type postgres from 'postgres';
import { DEFAULT_ROLES } from '../../control-plane/auth/permissions.ts';
import type { DevUser } from '../../api-edge/identity/dev-users.ts';
import type { TestStack } from './stack.ts';

const FIXTURES = fileURLToPath(new URL('../../control-plane/extract/fixtures/', import.meta.url));

/** A file of control-plane/extract/fixtures (real files of each format). */
export const fixture = async (name: string) => new Uint8Array(await readFile(join(FIXTURES, name)));

export interface DocsTenant {
  id: string;
  slug: string;
  admin: DevUser;
  member: DevUser;
}

/**
 * A tenant of the test's own on `plan`, with an administrator and a member the built-in provider
 * signs in (pass `users` to the stack): no other test file sees its documents or changes its plan.
 */
export async function createDocsTenant(sql: postgres.Sql, plan: 'free' | 'team' | 'enterprise', label = 'docs'): Promise<DocsTenant> {
  const suffix = randomBytes(4).toString('hex');
  const slug = `${label}-${suffix}`;
  const [tenant] = await sql<{ id: string }[]>`insert into tenants (slug, name, home_region, plan) values (${slug}, ${slug}, 'eu', ${plan}) returning id::text as id`;
  const id = tenant!.id;
  for (const [name, permissions] of Object.entries(DEFAULT_ROLES)) {
    await sql`insert into roles (tenant_id, name, permissions) values (${id}::uuid, ${name}, ${permissions as string[]})`;
  }
  const admin = { sub: randomUUID(), email: `admin-${suffix}@${label}.test`, name: `Admin ${suffix}`, tenant: slug };
  const member = { sub: randomUUID(), email: `member-${suffix}@${label}.test`, name: `Member ${suffix}`, tenant: slug };
  for (const [user, roles] of [[admin, ['admin', 'tenant-admin']], [member, ['member']]] as const) {
    const [row] = await sql<{ id: string }[]>`insert into users (email, name) values (${user.email}, ${user.name}) returning id::text as id`;
    await sql`insert into memberships (tenant_id, user_id, roles) values (${id}::uuid, ${row!.id}::uuid, ${roles})`;
  }
  return { id, slug, admin, member };
}

export interface FormFile {
  name?: string;
  filename: string;
  bytes: Uint8Array;
  type?: string;
}

/** A multipart form as a browser builds it: text fields and files in the order given. */
export function form(entries: Array<[string, string] | FormFile>): FormData {
  const data = new FormData();
  for (const entry of entries) {
    if (Array.isArray(entry)) data.append(entry[0], entry[1]);
    else data.append(entry.name ?? 'file', new Blob([entry.bytes], { type: entry.type ?? 'application/octet-stream' }), entry.filename);
  }
  return data;
}

/** POSTs a form to the edge with the bearer token; the answer's status, headers and JSON. */
export async function postForm(stack: TestStack, path: string, token: string, body: FormData | string, headers: Record<string, string> = {}) {
  const response = await fetch(stack.url + path, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers }, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** Every object under the tenant's documents area of the stack's blob store (staged uploads and temporary files included). */
export async function storedObjects(stack: TestStack, tenantId: string): Promise<string[]> {
  const root = join(stack.blobRoot, 'tenants', tenantId, 'documents');
  const found: string[] = [];
  async function walk(dir: string, prefix: string) {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory()) await walk(join(dir, entry.name), `${prefix}${entry.name}/`);
      else found.push(`${prefix}${entry.name}`);
    }
  }
  await walk(root, '');
  return found.sort();
}

const PDF_FORM_BOUNDARY = '----svc-documents-test';
/** The start of a multipart form whose one file, a PDF, goes on after `head`: for uploads that send no more than that, or stream the rest. */
export const PDF_FORM_START = {
  boundary: PDF_FORM_BOUNDARY,
  head: Buffer.from(`--${PDF_FORM_BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n`),
};

/**
 * POSTs only the head of a form whose `content-length` declares `declaredBytes`, and reads the
 * answer the edge gives before the rest would arrive (a length over the limit: 413, connection
 * closed). Sending a whole oversized body instead races that close: the client's write may fail
 * before it reads the answer.
 */
export function postOversizedForm(stack: TestStack, path: string, token: string, declaredBytes: number) {
  const { boundary, head } = PDF_FORM_START;
  return new Promise<{ status: number; headers: Headers; body: any }>((resolve, reject) => {
    const req = httpRequest(stack.url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(declaredBytes) },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value);
        resolve({ status: res.statusCode!, headers, body: text ? JSON.parse(text) : undefined });
        req.destroy();
      });
    });
    req.on('error', reject);
    req.write(head);
  });
}
