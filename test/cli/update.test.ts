import { execa } from 'execa';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installedBin, npm, npmEnv, packClient, runInstalled, type PackedClient } from './package.ts';
import { startRegistry, type Registry } from './registry.ts';
import { svc } from './svc.ts';

const nextPatch = (version: string) => version.replace(/^(\d+)\.(\d+)\.(\d+).*$/, (_all, major, minor, patch) => `${major}.${minor}.${Number(patch) + 1}`);

/**
 * `svc update` and `svc doctor --check-updates` against a release registry: the packed client is
 * published to a local Verdaccio (an npm registry server) as it is and again as the next patch
 * version, and the first is installed with `npm install -g` into a temporary prefix.
 */
describe('svc update against a release registry', { timeout: 300_000 }, () => {
  let dir: string;
  let registry: Registry;
  let packed: PackedClient;
  let next: string;
  let bin: string;
  let prefix: string;
  /** The installed client's environment: its home, and npm's settings (registry, cache) in the temporary folder. */
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-update-'));
    registry = await startRegistry(join(dir, 'registry'));
    env = { ...npmEnv(dir, registry.url), npm_config_userconfig: registry.npmrc };
    packed = await packClient(join(dir, 'packed'), env);
    next = nextPatch(packed.version);
    await npm(['publish', packed.tarball], env, dir);
    // The next release: the same files, the next version.
    const unpacked = join(dir, 'next');
    await mkdir(unpacked);
    await execa('tar', ['xzf', packed.tarball, '-C', unpacked]);
    const manifestPath = join(unpacked, 'package', 'package.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
    await writeFile(manifestPath, JSON.stringify({ ...manifest, version: next }, null, 2));
    await npm(['publish', join(unpacked, 'package'), '--ignore-scripts'], env, dir);
    prefix = join(dir, 'prefix');
    await npm(['install', '-g', `${packed.name}@${packed.version}`, '--prefix', prefix], env, dir);
    bin = installedBin(prefix);
  });
  afterAll(async () => {
    await registry?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("reports a newer release with --check, reading the registry of SVC_REGISTRY_URL or npm's setting", async () => {
    const expected = `Update available: ${packed.name} ${packed.version} -> ${next} (${registry.url}); run svc update\n`;
    // npm's own setting names an address nothing answers at: the variable wins.
    const fromVariable = await runInstalled(bin, ['update', '--check'], { ...env, npm_config_registry: 'http://127.0.0.1:9/', SVC_REGISTRY_URL: registry.url.replace(/\/$/, '') });
    expect(fromVariable.exitCode, fromVariable.stderr).toBe(0);
    expect(fromVariable.stdout + '\n').toBe(expected);
    // No SVC_REGISTRY_URL: npm's registry setting, from its user configuration.
    const { npm_config_registry: _set, ...npmrcOnly } = env;
    const fromNpm = await runInstalled(bin, ['update', '--check'], npmrcOnly);
    expect(fromNpm.exitCode, fromNpm.stderr).toBe(0);
    expect(fromNpm.stdout + '\n').toBe(expected);
    // The same from a source checkout of the same version.
    const fromSource = await svc(['update', '--check'], { HOME: dir, SVC_REGISTRY_URL: registry.url });
    expect(fromSource.stdout).toBe(expected);
  });

  it('reports the release status in doctor --check-updates', async () => {
    const doctor = await runInstalled(bin, ['doctor', '--check-updates', '--simple'], { ...env, SVC_REGISTRY_URL: registry.url }, dir);
    expect(doctor.stdout).toContain(`\nwarning release: ${packed.version} is not the latest release, ${next} (${registry.url})\n  Suggestion: run svc update\n`);
    const without = await runInstalled(bin, ['doctor', '--simple'], { ...env, SVC_REGISTRY_URL: registry.url }, dir);
    expect(without.stdout).not.toContain('release');
  });

  it('fails clearly when the registry does not answer or has no such package', async () => {
    const down = await runInstalled(bin, ['update', '--check'], { ...env, SVC_REGISTRY_URL: 'http://127.0.0.1:9/' });
    expect(down.exitCode).toBe(8);
    expect(down.stderr).toContain('Error E201: Platform API unreachable: http://127.0.0.1:9');
    const elsewhere = await runInstalled(bin, ['update'], { ...env, SVC_REGISTRY_URL: `${registry.url}no-such-path/` });
    expect(elsewhere.exitCode).toBe(5);
    expect(elsewhere.stderr).toContain(`Error E202: Package ${packed.name} in the release registry ${registry.url}no-such-path/ not found`);
    const unreachableDoctor = await runInstalled(bin, ['doctor', '--check-updates', '--simple'], { ...env, SVC_REGISTRY_URL: 'http://127.0.0.1:9/' }, dir);
    expect(unreachableDoctor.stdout).toContain('FAILED release: E201 Platform API unreachable: http://127.0.0.1:9');
  });

  it('refuses to update a client run from a source checkout', async () => {
    const refused = await svc(['update'], { HOME: dir, SVC_REGISTRY_URL: registry.url });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/^Error E305: Invalid input: this client runs from a source checkout \(.+\/cli\), not an npm installation/);
  });

  it('installs the newer release into the prefix the client was installed in', async () => {
    const updated = await runInstalled(bin, ['update'], { ...env, SVC_REGISTRY_URL: registry.url });
    expect(updated.exitCode, updated.stderr).toBe(0);
    expect(updated.stdout).toBe(`Updated ${packed.name} ${packed.version} -> ${next} in ${prefix}`);
    expect((await runInstalled(bin, ['--version'], env)).stdout).toBe(next);
    const again = await runInstalled(bin, ['update'], { ...env, SVC_REGISTRY_URL: registry.url });
    expect(again.stdout).toBe(`Up to date: ${packed.name} ${next} is the latest release (${registry.url})`);
    const doctor = await runInstalled(bin, ['doctor', '--check-updates', '--simple'], { ...env, SVC_REGISTRY_URL: registry.url }, dir);
    expect(doctor.stdout).toContain(`\nok release: ${next} (latest release ${next}, ${registry.url})\n`);
  });
});
