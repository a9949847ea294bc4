import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_CODES } from '../../cli/errors.ts';
import { svc } from './svc.ts';

/**
 * A base URL of plain `http:` would send the bearer token (and, at login, the authorization code)
 * in the clear: the client refuses it for any host but the loopback one, before any call.
 */
describe('svc base URL', { timeout: 60_000 }, () => {
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'svc-home-'));
  });
  afterAll(async () => {
    if (home) await rm(home, { recursive: true, force: true });
  });

  it.each(['http://api.example.test', 'http://10.0.0.8:8080/', 'http://localhost.example.test', 'http://127.0.0.1.nip.io'])(
    'refuses %s with E006 and the configuration exit code, in JSON and as text',
    async (baseUrl) => {
      const env = { HOME: home, SVC_TOKEN: 'token', BASE_URL_PUBLIC_API: baseUrl };
      const json = await svc(['resources', 'list', 'project', '--tenant-id', 'acme', '--format', 'json'], env);
      expect(json.exitCode).toBe(EXIT_CODES.config);
      expect(json.json.error).toMatchObject({ code: 'E006', exitCode: EXIT_CODES.config });
      expect(json.json.error.message).toMatch(/https/);
      const text = await svc(['resources', 'list', 'project', '--tenant-id', 'acme'], env);
      expect(text.exitCode).toBe(EXIT_CODES.config);
      expect(text.stderr).toContain('E006');
      expect(text.stderr).toContain(new URL(baseUrl).host);
      const login = await svc(['login', '--device'], { HOME: home, BASE_URL_PUBLIC_API: baseUrl });
      expect(login.exitCode).toBe(EXIT_CODES.config);
      expect(login.stderr).toContain('E006');
    },
  );

  it("refuses a profile's http: base URL for a remote host", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-home-'));
    try {
      await mkdir(join(dir, '.svc'));
      await writeFile(join(dir, '.svc', 'profiles.json'), JSON.stringify({ staging: { baseUrl: 'http://staging.example.test' } }));
      const run = await svc(['resources', 'list', 'project', '--tenant-id', 'acme', '--profile', 'staging', '--format', 'json'], { HOME: dir, SVC_TOKEN: 'token' });
      expect(run.json.error).toMatchObject({ code: 'E006', exitCode: EXIT_CODES.config });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each(['http://localhost:9', 'http://127.0.0.1:9', 'http://[::1]:9'])('accepts loopback %s (nothing listens there: unreachable, not refused)', async (baseUrl) => {
    const run = await svc(['resources', 'list', 'project', '--tenant-id', 'acme', '--format', 'json'], { HOME: home, SVC_TOKEN: 'token', BASE_URL_PUBLIC_API: baseUrl });
    expect(run.json.error).toMatchObject({ code: 'E201', exitCode: EXIT_CODES.unreachable });
  });
});
