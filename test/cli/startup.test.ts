import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildClient } from '../../cli/scripts/build.ts';

/**
 * What every start of `svc` loads, `--version` and `--help` included: the program, the table of
 * top-level commands and the output, nothing a command needs only when it runs. The module of a
 * command is loaded when that command (or its help) is asked for; a command loads its services
 * (and with them the schema library, the HTTP client, the prompts) in its action.
 */
describe('the start-up of the compiled client', { timeout: 120_000 }, () => {
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('loads no command module, service or package a command loads when it runs', async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-startup-'));
    const { startup } = await buildClient({ outdir: join(dir, 'dist') });
    const packages = startup.filter((input) => input.includes('node_modules/')).map((input) => input.slice(input.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(packages.sort()).toEqual(['@commander-js/extra-typings', 'commander', 'picocolors']);
    const services = startup.filter((input) => input.startsWith('services/'));
    expect(services.filter((file) => !file.endsWith('.constants.ts'))).toEqual([]);
    expect(startup.filter((input) => input.startsWith('commands/'))).toEqual(['commands/_top-level.ts']);
    expect(startup).toContain('program.ts');
  });
});
