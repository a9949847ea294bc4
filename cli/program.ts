import { Command, Option, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { command as blocks } from './commands/blocks/index.ts';
import { command as chat } from './commands/chat/index.ts';
import { command as deploy } from './commands/deploy/index.ts';
import { command as docs } from './commands/docs.ts';
import { command as doctor } from './commands/doctor.ts';
import { command as env } from './commands/env/index.ts';
import { command as agent } from './commands/agent/index.ts';
import { command as dev } from './commands/dev.ts';
import { command as init } from './commands/init.ts';
import { command as login } from './commands/login.ts';
import { command as logout } from './commands/logout.ts';
import { command as provision } from './commands/provision/index.ts';
import { command as publicapi } from './commands/publicapi/index.ts';
import { command as resources } from './commands/resources/index.ts';
import { command as template } from './commands/template/index.ts';
import { command as tenant } from './commands/tenant/index.ts';
import { command as types } from './commands/types/index.ts';
import { command as update } from './commands/update.ts';
import { command as user } from './commands/user/index.ts';
import { command as verify } from './commands/verify/index.ts';
import { command as vertical } from './commands/vertical/index.ts';
import { command as whoami } from './commands/whoami.ts';
import { command as workflow } from './commands/workflow/index.ts';
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

/**
 * The whole command tree. Program options must come before a command name (so a command's
 * own `--version` is its own); the global options are also on every command, so they work anywhere.
 */
export function buildProgram(): Command {
  const program = new Command('svc')
    .description('Command-line client of the platform API v4')
    .version(VERSION, '-V, --version', 'print the client version')
    .enablePositionalOptions()
    .showSuggestionAfterError()
    .configureOutput(OUTPUT);
  for (const option of globalOptions()) program.addOption(option);
  for (const command of [init, dev, resources, types, tenant, user, provision, env, workflow, chat, docs, vertical, publicapi, verify, agent, template, login, whoami, logout, deploy, blocks, update, doctor]) program.addCommand(command);
  for (const command of leaves(program)) {
    if (command === (program as unknown as CommandUnknownOpts)) continue;
    for (const option of globalOptions()) command.addOption(option.hideHelp());
    command.exitOverride().configureOutput(OUTPUT).showSuggestionAfterError();
  }
  program.exitOverride();
  return program;
}
