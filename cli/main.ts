import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { CommanderError, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { CliError } from './errors.ts';
import { Output, type Format } from './output.ts';
import { buildProgram, commandNamed } from './program.ts';

/** Commander's parse failures as the client's codes. */
function fromCommander(error: CommanderError): CliError {
  const text = error.message.replace(/^error: /, '');
  switch (error.code) {
    case 'commander.missingArgument': {
      const name = /argument '([^']+)'/.exec(text)?.[1] ?? 'argument';
      return new CliError('E303', { field: `<${name}>` });
    }
    case 'commander.missingMandatoryOptionValue':
      return new CliError('E303', { field: /--[\w-]+/.exec(text)?.[0] ?? text });
    default:
      return new CliError('E305', { details: text });
  }
}

/** The output for a failure that happened before a command built its own: from the raw arguments. */
function fallbackOutput(argv: string[]): Output {
  const at = argv.findIndex((a) => a === '--format' || a.startsWith('--format='));
  const value = at < 0 ? undefined : argv[at]!.includes('=') ? argv[at]!.split('=')[1] : argv[at + 1];
  const format: Format = value === 'json' || argv.includes('--json') ? 'json' : 'text';
  const color = argv.includes('--no-color') ? false : argv.includes('--color') ? true : undefined;
  return new Output({ format, color, simple: argv.includes('--simple') });
}

/** The subcommand named by the leading words of `argv` (for `svc resources --describe`). */
function commandAt(program: CommandUnknownOpts, argv: string[]): CommandUnknownOpts {
  let command = program;
  for (const word of argv) {
    if (word.startsWith('-')) break;
    const next = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!next) break;
    command = next;
  }
  return command;
}

/** Runs the client with `argv` (without node and the script); resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const describing = argv.includes('--describe');
  const named = commandNamed(argv);
  // Only the command that runs is loaded; a description covers every command.
  const program = (await buildProgram(describing ? undefined : named ? [named] : [])) as unknown as CommandUnknownOpts;
  if (describing) {
    const { describeProgram } = await import('./describe.ts');
    const description = describeProgram(program);
    const target = commandAt(program, argv);
    const path = target === program ? undefined : commandPath(target);
    const find = (list: typeof description.commands): unknown => {
      for (const c of list) {
        if (c.path === path) return c;
        const inner = find(c.commands);
        if (inner) return inner;
      }
      return undefined;
    };
    process.stdout.write(JSON.stringify(path ? find(description.commands) : description, null, 2) + '\n');
    return 0;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return process.exitCode === undefined ? 0 : Number(process.exitCode);
  } catch (error) {
    if (error instanceof CommanderError) {
      if (['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code)) return error.exitCode;
      if (error.code === 'commander.executeSubCommandAsync') return error.exitCode;
    }
    const failure = error instanceof CliError ? error : error instanceof CommanderError ? fromCommander(error) : undefined;
    // The running command's context, when it built one (its module is loaded by then).
    const { latestContext } = await import('./context.ts');
    const out = latestContext()?.out ?? fallbackOutput(argv);
    if (!failure) {
      const unexpected = new CliError('E203', { details: (error as Error)?.message ?? String(error) });
      out.error(unexpected);
      if (process.env['SVC_DEBUG']) process.stderr.write(`${(error as Error)?.stack}\n`);
      return unexpected.exitCode;
    }
    out.error(failure);
    return failure.exitCode;
  }
}

function commandPath(command: CommandUnknownOpts): string {
  const names: string[] = [];
  for (let c: CommandUnknownOpts | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  process.exitCode = await main(process.argv.slice(2));
}
