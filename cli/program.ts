import { Command, Option, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { TOP_LEVEL, type TopLevelName } from './commands/_top-level.ts';
import { clientPackage } from './package-info.ts';

export const VERSION: string = clientPackage().version;

/** Options every command takes, before or after its name. */
export const globalOptions = () => [
  new Option('--simple', 'plain output for screen readers: no colour, symbols, tables or spinners'),
  new Option('--color', 'colour even when the output is not a terminal'),
  new Option('--no-color', 'no colour (also NO_COLOR, TERM=dumb, or output that is not a terminal)'),
  new Option('--no-input', 'never prompt: fail naming the flag that is needed instead'),
  new Option('--profile <name>', 'locally configured profile (~/.svc/profiles.json; default: SVC_PROFILE or "default")'),
  new Option('--describe', 'print a JSON description of the command tree and exit'),
];

/** The names (attribute form) of the global options, to tell them apart from a command's own. */
export const GLOBAL_OPTION_NAMES = new Set(globalOptions().map((o) => o.attributeName()));

/** Help on stdout, commander's own error lines dropped: the client reports them with its codes. */
const OUTPUT = { writeOut: (s: string) => process.stdout.write(s), writeErr: (s: string) => process.stderr.write(s), outputError: () => {} };

const leaves = (command: CommandUnknownOpts): CommandUnknownOpts[] =>
  command.commands.length === 0 ? [command] : [command, ...command.commands.flatMap(leaves)];

const isTopLevel = (name: string | undefined): name is TopLevelName => name !== undefined && Object.hasOwn(TOP_LEVEL, name);

/**
 * The top-level command `argv` runs or asks help for (`svc resources list`, `svc help resources`),
 * read as the program reads it: its options come before the command's name. Undefined when it
 * names none (`svc --help`, `svc --version`, an unknown word: the program answers those itself).
 */
export function commandNamed(argv: string[]): TopLevelName | undefined {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--profile') i++;
    else if (!word.startsWith('-')) return isTopLevel(word) ? word : word === 'help' && isTopLevel(argv[i + 1]) ? argv[i + 1] as TopLevelName : undefined;
  }
  return undefined;
}

/** A stand-in for a command that is not loaded: what the program's help lists of it. */
function placeholder(name: TopLevelName): CommandUnknownOpts {
  const { description, usage } = TOP_LEVEL[name];
  const command = new Command(name).description(description);
  if (usage) command.arguments(usage);
  return command.action(() => {
    throw new Error(`the command ${name} was not loaded`);
  });
}

/**
 * The command tree. Program options must come before a command name (so a command's own
 * `--version` is its own); the global options are also on every command, so they work anywhere.
 * Only the modules of the commands in `load` are imported (all of them by default); the others
 * are placeholders that list in the program's help as the commands themselves do.
 */
export async function buildProgram(load: readonly TopLevelName[] = Object.keys(TOP_LEVEL) as TopLevelName[]): Promise<Command> {
  const program = new Command('svc')
    .description('Command-line client of the platform API v4')
    .version(VERSION, '-V, --version', 'print the client version')
    .enablePositionalOptions()
    .showSuggestionAfterError()
    .configureOutput(OUTPUT);
  for (const option of globalOptions()) program.addOption(option);
  const names = Object.keys(TOP_LEVEL) as TopLevelName[];
  const loaded = new Map(await Promise.all(load.map(async (name) => [name, (await TOP_LEVEL[name].load()).command] as const)));
  for (const name of names) program.addCommand(loaded.get(name) ?? placeholder(name));
  for (const command of leaves(program)) {
    if (command === (program as unknown as CommandUnknownOpts)) continue;
    for (const option of globalOptions()) command.addOption(option.hideHelp());
    command.exitOverride().configureOutput(OUTPUT).showSuggestionAfterError();
  }
  program.exitOverride();
  return program;
}
