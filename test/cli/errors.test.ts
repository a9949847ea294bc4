import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS, errorTable, type ErrorCodeName } from '../../cli/errors.ts';
import { ADMIN, MEMBER, startTestStack, type TestStack } from '../harness/stack.ts';
import { expiredToken, svc, type SvcRun } from './svc.ts';

/**
 * The client's failures through the real process: every error code of `cli/errors.ts` that a
 * command of this part can run into, in JSON (`{error: {code, message, suggestion, exitCode}}` on
 * stdout) and as text (two lines on stderr), each with the exit code of the table; and every
 * destructive command of `--describe` refusing to act without `--force` when it cannot ask.
 */

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A template of the table with its `{x}` tokens filled: a string is taken literally, a RegExp as a pattern. */
function pattern(template: string, vars: Record<string, string | RegExp>): string {
  return template
    .split(/(\{\w+\})/)
    .map((part) => {
      const token = /^\{(\w+)\}$/.exec(part)?.[1];
      if (!token) return escape(part);
      const value = vars[token];
      if (value === undefined) throw new Error(`no value for {${token}}`);
      return typeof value === 'string' ? escape(value) : `(?:${value.source})`;
    })
    .join('');
}

interface Fixtures {
  home: string;
  acme: string;
  project: { id: string };
}

/** How a command runs into the code. */
interface Trigger {
  args(fx: Fixtures): string[];
  /** The environment besides HOME (default: the administrator's token and the platform's address). */
  env?(fx: Fixtures): Record<string, string | undefined>;
  /** A directory to run in (default: the home). */
  cwd?(fx: Fixtures): Promise<string>;
  /** A home of its own (default: the shared one). */
  home?(fx: Fixtures): Promise<string>;
  /** The values of the code's `{x}` tokens. */
  vars?(fx: Fixtures): Record<string, string | RegExp>;
  /** The flags that ask for JSON output (default `--format json`). */
  jsonFlags?: string[];
  /** The command is plain text only (no `--format`): the text form alone, and why. */
  textOnly?: string;
  /** Reads back what the command must not have changed. */
  unchanged?(fx: Fixtures): Promise<void>;
  /** Lines the text form writes on stderr before the error (what E005 found wrong); the JSON form writes none. */
  textBefore?: RegExp;
}

/** A code no command of this part can reach, and why. */
interface Unreachable {
  unreachable: string;
}

describe('svc errors and exit codes', { timeout: 180_000 }, () => {
  let stack: TestStack;
  let root: string;
  let fx: Fixtures;
  let env: Record<string, string>;
  let described: Array<{ path: string; destructive: boolean; commands: any[] }>;
  let memberToken: string;
  const run = randomUUID().slice(0, 8);

  const api = async (method: string, path: string, body?: unknown, options: { rawBody?: string; headers?: Record<string, string> } = {}) => {
    const answer = await stack.request(method, path, { as: ADMIN, body, ...options });
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const status = async (path: string) => (await stack.request('GET', path, { as: ADMIN, conformance: false })).status;
  const newDir = (prefix: string) => mkdtemp(join(root, `${prefix}-`));

  beforeAll(async () => {
    stack = await startTestStack();
    root = await mkdtemp(join(tmpdir(), 'svc-errors-'));
    const acme = (await api('GET', '/v4/identity/tenants')).data.find((t: any) => t.slug === 'acme').id;
    fx = { home: await newDir('home'), acme, project: await api('POST', `/v4/data/resources/${acme}/project`, { data: { name: `Errors ${run}` } }) };
    env = { HOME: fx.home, SVC_TOKEN: await stack.token(ADMIN), BASE_URL_PUBLIC_API: stack.url };
    const flatten = (list: any[]): any[] => list.flatMap((c) => [c, ...flatten(c.commands)]);
    described = flatten((await svc(['--describe'])).json.commands);
    memberToken = await stack.token(MEMBER);
  });
  afterAll(async () => {
    await stack?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const CODES: Record<ErrorCodeName, Trigger | Unreachable> = {
    E001: { args: () => ['template', 'check'], cwd: () => newDir('not-a-project') },
    E002: {
      args: (f) => ['resources', 'list', 'project', '--tenant-id', f.acme],
      env: () => ({ SVC_TOKEN: 'token', BASE_URL_PUBLIC_API: undefined }),
      vars: () => ({ var: 'BASE_URL_PUBLIC_API' }),
    },
    E003: {
      args: (f) => ['resources', 'list', 'project', '--tenant-id', f.acme, '--profile', 'staging'],
      env: () => ({ SVC_TOKEN: 'token', BASE_URL_PUBLIC_API: undefined }),
      vars: (f) => ({ file: join(f.home, '.svc', 'profiles.json') }),
    },
    E004: { args: () => ['types', 'seed', '--tenant-key', 'acme'], cwd: () => newDir('empty') },
    E005: {
      args: () => ['template', 'check'],
      // A project whose manifest is not JSON.
      cwd: async () => {
        const dir = await newDir('broken-project');
        await writeFile(join(dir, 'svc.config.ts'), 'export default {};\n');
        await writeFile(join(dir, 'svc.project.json'), '{"manifestVersion": 1,');
        return dir;
      },
      textBefore: /! svc\.project\.json is not JSON: .+\n/,
    },
    E006: {
      args: (f) => ['resources', 'list', 'project', '--tenant-id', f.acme],
      env: () => ({ SVC_TOKEN: undefined }),
      // A tokens file that is not JSON.
      home: async () => {
        const home = await newDir('broken');
        await mkdir(join(home, '.svc'));
        await writeFile(join(home, '.svc', 'tokens.json'), '{not json', { mode: 0o600 });
        return home;
      },
      vars: () => ({ details: /.+\/\.svc\/tokens\.json: .*JSON.*/ }),
    },
    E101: { args: (f) => ['resources', 'list', 'project', '--tenant-id', f.acme], env: () => ({ SVC_TOKEN: undefined }) },
    E102: { args: (f) => ['resources', 'list', 'project', '--tenant-id', f.acme], env: () => ({ SVC_TOKEN: expiredToken() }) },
    E103: { args: (f) => ['resources', 'list', 'project', '--tenant-id', f.acme], env: () => ({ SVC_TOKEN: 'not-a-token' }) },
    E104: {
      // An address that answers, but not as an identity provider.
      args: () => ['login'],
      textOnly: 'login prints plain text only',
      env: () => ({ SVC_TOKEN: undefined, BASE_URL_PUBLIC_API: `${stack.url}/nowhere` }),
      vars: () => ({ details: /discovery failed at http:\/\/127\.0\.0\.1:\d+: .+/ }),
    },
    E201: {
      args: (f) => ['resources', 'list', 'project', '--tenant-id', f.acme],
      env: () => ({ BASE_URL_PUBLIC_API: 'http://127.0.0.1:9' }),
      vars: () => ({ url: 'http://127.0.0.1:9' }),
    },
    E202: {
      args: (f) => ['resources', 'get', 'project', '00000000-0000-4000-8000-000000000000', '--tenant-id', f.acme],
      vars: () => ({ resource: 'project 00000000-0000-4000-8000-000000000000' }),
    },
    E203: {
      // A method the route does not take: 405, which no more specific code covers.
      args: () => ['publicapi', 'put', '/v4/identity/tenants'],
      vars: () => ({ details: '405 PUT is not allowed on /v4/identity/tenants' }),
    },
    E204: {
      args: (f) => ['resources', 'storage', 'doctor', '--tenant-id', f.acme],
      env: () => ({ SVC_TOKEN: memberToken }),
    },
    E205: {
      args: (f) => ['resources', 'update', 'project', f.project.id, '--tenant-id', f.acme, '--version', '7', '--data', '{"name":"Stale"}'],
      vars: () => ({ details: /.*current version 1.*/ }),
      unchanged: async (f) => expect((await api('GET', `/v4/data/resources/${f.acme}/project/${f.project.id}`)).data.name).toBe(`Errors ${run}`),
    },
    E301: {
      args: () => ['types', 'seed', '--tenant-key', 'acme'],
      cwd: async () => {
        const dir = await newDir('invalid');
        await mkdir(join(dir, 'src/svc.config'), { recursive: true });
        await writeFile(join(dir, 'src/svc.config/object-types.ts'), 'export const objectTypes = [{ name: "lower", schema: { type: "object" } }];\n');
        return dir;
      },
      vars: () => ({ details: 'objectTypes[0] (lower).name: must be PascalCase (PurchaseOrder)' }),
    },
    E302: {
      args: (f) => ['resources', 'create', 'project', '--tenant-id', f.acme, '--data', `{"name":"Invalid ${run}","budget":-1}`],
      vars: () => ({ details: /.*budget.*/ }),
      unchanged: async (f) => expect((await api('GET', `/v4/data/resources/${f.acme}/project?where=${encodeURIComponent(JSON.stringify({ name: `Invalid ${run}` }))}`)).total).toBe(0),
    },
    E303: { args: (f) => ['resources', 'query', '--tenant-id', f.acme], vars: () => ({ field: '--types' }) },
    E304: {
      args: (f) => ['resources', 'list', 'project', '--tenant-id', f.acme, '--format', 'yaml'],
      // --format is what is wrong here: the deprecated --json still asks for the JSON form.
      jsonFlags: ['--json'],
      vars: () => ({ details: '--format yaml', validFormats: 'text, json' }),
    },
    E305: {
      args: (f) => ['resources', 'create', 'project', '--tenant-id', f.acme, '--data', '{name'],
      vars: () => ({ details: /--data is not valid JSON: .+/ }),
    },
  };

  it('has a trigger or a reason for every code of the table', () => {
    expect(Object.keys(CODES)).toEqual(errorTable().map((e) => e.code));
    const unreachable = Object.values(CODES).filter((c) => 'unreachable' in c);
    expect(unreachable.length, 'keep the unreachable codes few').toBeLessThanOrEqual(2);
  });

  describe.concurrent('each code', () => {
    for (const [code, trigger] of Object.entries(CODES) as Array<[ErrorCodeName, Trigger | Unreachable]>) {
      if ('unreachable' in trigger) continue;
      const entry = ERRORS[code];
      it(`${code}: ${entry.message}, exit ${entry.exitCode}, ${'textOnly' in trigger && trigger.textOnly ? `as text (${trigger.textOnly})` : 'in JSON and as text'}`, async ({ expect }) => {
        const home = trigger.home ? await trigger.home(fx) : fx.home;
        const cwd = trigger.cwd ? await trigger.cwd(fx) : home;
        const runEnv = { ...env, HOME: home, ...trigger.env?.(fx) };
        const vars = trigger.vars?.(fx) ?? {};
        const message = pattern(entry.message, vars);
        const suggestion = pattern(entry.suggestion, vars);
        const [json, text]: [SvcRun | undefined, SvcRun] = await Promise.all([
          trigger.textOnly ? undefined : svc([...trigger.args(fx), ...(trigger.jsonFlags ?? ['--format', 'json'])], runEnv, undefined, cwd),
          svc(trigger.args(fx), runEnv, undefined, cwd),
        ]);

        expect(text.exitCode, text.stderr).toBe(entry.exitCode);
        expect(text.stdout).toBe('');
        expect(text.stderr).toMatch(new RegExp(`^${trigger.textBefore?.source ?? ''}Error ${code}: ${message}\\n→ ${suggestion}\\n$`));
        await trigger.unchanged?.(fx);
        if (!json) return;
        expect(json.exitCode, json.stdout + json.stderr).toBe(entry.exitCode);
        expect(Object.keys(json.json ?? {})).toEqual(['error']);
        expect(Object.keys(json.json.error)).toEqual(['code', 'message', 'suggestion', 'exitCode']);
        expect(json.json.error).toMatchObject({ code, exitCode: entry.exitCode });
        expect(json.json.error.message).toMatch(new RegExp(`^${message}$`));
        expect(json.json.error.suggestion).toMatch(new RegExp(`^${suggestion}$`));
        expect(json.stderr).toBe('');
      });
    }
  });

  /** Each destructive command: what it would destroy, and a read-back that it is still there. */
  const DESTRUCTIVE: Record<string, () => Promise<{ args: string[]; stillThere(): Promise<void> }>> = {
    'resources delete': async () => {
      const resource = await api('POST', `/v4/data/resources/${fx.acme}/project`, { data: { name: `Keep ${run}` } });
      return {
        args: ['resources', 'delete', 'project', resource.id, '--tenant-id', fx.acme],
        stillThere: async () => expect(await status(`/v4/data/resources/${fx.acme}/project/${resource.id}`)).toBe(200),
      };
    },
    'resources batch-delete': async () => {
      const ids: string[] = [];
      for (const name of ['Keep 1', 'Keep 2']) ids.push((await api('POST', `/v4/data/resources/${fx.acme}/project`, { data: { name } })).id);
      return {
        args: ['resources', 'batch-delete', 'project', '--ids', ids.join(','), '--tenant-id', fx.acme],
        stillThere: async () => {
          for (const id of ids) expect(await status(`/v4/data/resources/${fx.acme}/project/${id}`)).toBe(200);
        },
      };
    },
    'resources file delete': async () => {
      const type = await api('POST', `/v4/data/resources/object-types?tenant_id=${fx.acme}`, {
        name: `Memo${run}Errors`,
        schema: { type: 'object', properties: { title: { type: 'string' } } },
        fileProperties: { notes: { maxSize: 4096, contentTypes: ['text/plain'] } },
      });
      const memo = await api('POST', `/v4/data/resources/${fx.acme}/${type.key}`, { data: { title: 'Keep' } });
      await api('POST', `/v4/data/resources/${fx.acme}/${type.key}/${memo.id}/files/notes?filename=notes.txt`, undefined, { rawBody: 'keep me\n', headers: { 'content-type': 'text/plain' } });
      return {
        args: ['resources', 'file', 'delete', type.key, memo.id, 'notes', '--tenant-id', fx.acme],
        stillThere: async () => expect(await status(`/v4/data/resources/${fx.acme}/${type.key}/${memo.id}/files/notes`)).toBe(200),
      };
    },
    'user remove': async () => {
      const member = await api('GET', `/v4/platform/users/by-email?email=${encodeURIComponent(MEMBER)}`);
      const memberships = async () => JSON.stringify(await api('GET', `/v4/platform/users/${member.id}/memberships`));
      expect(await memberships()).toContain(fx.acme);
      return { args: ['user', 'remove', '--email', MEMBER, '--tenant', fx.acme], stillThere: async () => expect(await memberships()).toContain(fx.acme) };
    },
    'tenant delete': async () => {
      const child = await api('POST', `/v4/platform/tenants/${fx.acme}/children`, { name: 'Keep', slug: `keep-${run}` });
      await api('POST', `/v4/platform/tenants/${fx.acme}/children/${child.id}/bootstrap-admin`);
      const state = async () => (await api('GET', '/v4/identity/tenants')).data.find((t: any) => t.id === child.id)?.status;
      for (let attempt = 0; (await state()) !== 'active'; attempt++) {
        if (attempt > 240) throw new Error('the child tenant did not become active');
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      return { args: ['tenant', 'delete', child.id], stillThere: async () => expect(await state()).toBe('active') };
    },
  };

  it('has a case for every destructive command of --describe', () => {
    const destructive = described.filter((c) => c.destructive).map((c) => c.path);
    expect(Object.keys(DESTRUCTIVE).sort()).toEqual(destructive.sort());
  });

  describe.concurrent('without a terminal, a destructive command never asks', () => {
    for (const [path, prepare] of Object.entries(DESTRUCTIVE)) {
      it(`${path} without --force exits 2 naming --force, and changes nothing`, async ({ expect }) => {
        const target = await prepare();
        // An answer waiting on stdin is not read: a pipe is not someone at a terminal.
        const [piped, inCi] = await Promise.all([
          svc(target.args, env, 'y\n'),
          svc([...target.args, '--format', 'json'], { ...env, CI: 'true' }),
        ]);
        expect(piped.exitCode, piped.stderr).toBe(2);
        expect(piped.stdout).toBe('');
        expect(piped.stderr).toBe('Error E305: Invalid input: confirmation required and prompts are off (no terminal, CI or --no-input): pass --force\n→ check the input and retry\n');
        expect(inCi.exitCode).toBe(2);
        expect(inCi.json.error).toMatchObject({ code: 'E305', exitCode: 2, message: expect.stringContaining('pass --force') });
        await target.stillThere();
      });
    }
  });
});
