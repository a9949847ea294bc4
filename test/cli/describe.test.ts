import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../cli/program.ts';
import { DOCS_PATH, renderDocs } from '../../cli/scripts/docs.ts';
import { svc } from './svc.ts';

const COMMANDS_DIR = fileURLToPath(new URL('../../cli/commands/', import.meta.url));

/**
 * Every command file under cli/commands, as its command path (`resources/list.ts` -> `resources list`).
 * A folder's noun is assembled by its `index.ts`, or, when one of its verbs is `index`
 * (`docs/index.ts`), by `<folder>.ts` beside it; neither is a command of its own.
 */
function commandFiles(dir = COMMANDS_DIR): string[] {
  const names = readdirSync(dir);
  return names.flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return commandFiles(path);
    if (name.startsWith('_') || !name.endsWith('.ts')) return [];
    const assemblesFolder = names.includes(name.replace(/\.ts$/, '')) && statSync(path.replace(/\.ts$/, '')).isDirectory();
    const assembler = name === 'index.ts' ? !existsSync(`${dir}.ts`) : assemblesFolder;
    if (assembler) return [];
    return [relative(COMMANDS_DIR, path).replace(/\.ts$/, '').split('/').join(' ')];
  });
}

interface Described {
  path: string;
  commands: Described[];
  [key: string]: unknown;
}
const flatten = (list: Described[]): Described[] => list.flatMap((c) => [c, ...flatten(c.commands)]);

describe('svc --describe', () => {
  it('prints the command tree as JSON: commands, arguments, options with defaults, calls, and the error table', async () => {
    const run = await svc(['--describe']);
    expect(run.exitCode).toBe(0);
    const tree = run.json;
    expect(tree).toMatchObject({ name: 'svc', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(tree.globalOptions.map((o: any) => o.flags)).toEqual(['-V, --version', '--simple', '--color', '--no-color', '--no-input', '--profile <name>', '--describe']);
    const list = flatten(tree.commands).find((c) => c.path === 'resources list')!;
    expect(list).toMatchObject({
      name: 'list',
      arguments: [{ name: 'type', required: true, variadic: false }],
      calls: ['GET /v4/data/resources/{tenantId}/{objectType}'],
      destructive: false,
    });
    const options = Object.fromEntries((list['options'] as any[]).map((o) => [o.flags, o]));
    expect(options['--page <n>']).toMatchObject({ default: 1, takesValue: true });
    expect(options['--limit <n>']).toMatchObject({ default: 20 });
    expect(options['--sort <fields>']).toMatchObject({ default: '-created_at' });
    expect(options['--format <format>']).toMatchObject({ default: 'text', choices: ['text', 'json'] });
    expect(options['--json']).toMatchObject({ deprecated: true });
    // Global options are described once, not per command.
    expect(options['--simple']).toBeUndefined();
    expect(flatten(tree.commands).find((c) => c.path === 'resources delete')).toMatchObject({ destructive: true });
    expect(flatten(tree.commands).find((c) => c.path === 'resources query')!['options']).toContainEqual(expect.objectContaining({ flags: '--types <csv>', required: true }));
    expect(tree.errors.map((e: any) => e.code)).toEqual([
      'E001', 'E002', 'E003', 'E004', 'E005', 'E006', 'E101', 'E102', 'E103', 'E104',
      'E201', 'E202', 'E203', 'E204', 'E205', 'E301', 'E302', 'E303', 'E304', 'E305',
    ]);
    expect(tree.errors.every((e: any) => e.exitCode > 0)).toBe(true);
  });

  it('describes one subtree when a command path comes first', async () => {
    const run = await svc(['resources', 'update', '--describe']);
    expect(run.json).toMatchObject({ path: 'resources update', calls: ['GET /v4/data/resources/{tenantId}/{objectType}/{id}', 'PUT /v4/data/resources/{tenantId}/{objectType}/{id}'] });
  });

  it('names every command by its file: cli/commands/<noun>/<verb>.ts', async () => {
    const tree = (await svc(['--describe'])).json;
    const leaves = flatten(tree.commands).filter((c) => c.commands.length === 0).map((c) => c.path);
    expect(leaves.sort()).toEqual(commandFiles().sort());
  });

  it('keeps docs/cli.md generated from the command tree', async () => {
    const tree = (await svc(['--describe'])).json;
    expect(readFileSync(DOCS_PATH, 'utf8'), 'docs/cli.md is out of date: run npx tsx cli/scripts/docs.ts').toBe(renderDocs(tree));
  });

  it('lists the top-level commands from their table as their modules define them', async () => {
    // svc --help loads no command module: the table's placeholders must list as the commands do.
    const placeholders = await buildProgram([]);
    const commands = await buildProgram();
    expect(placeholders.helpInformation()).toBe(commands.helpInformation());
    expect(placeholders.commands.map((c) => c.name())).toEqual(commands.commands.map((c) => c.name()));
  });

  it('loads the command a start names, after the program options or after help', async () => {
    const afterOptions = await svc(['--profile', 'other', '--no-color', 'resources', '--help']);
    expect(afterOptions.exitCode).toBe(0);
    expect(afterOptions.stdout).toContain('Usage: svc resources [options] [command]');
    expect(afterOptions.stdout).toContain('batch-create [options] <type>');
    const viaHelp = await svc(['help', 'init']);
    expect(viaHelp.stdout).toContain('Usage: svc init [options] [name]');
    expect(viaHelp.stdout).toContain('--current-dir');
    const unknown = await svc(['resourcs', 'list']);
    expect(unknown.exitCode).not.toBe(0);
    expect(unknown.stderr).toContain('resources');
  });

  it('prints the version with -V and help on stdout', async () => {
    const version = await svc(['-V']);
    expect(version.exitCode).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const help = await svc(['resources', 'list', '--help']);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('Usage: svc resources list [options] <type>');
  });
});
