import type { CommandUnknownOpts, Option } from '@commander-js/extra-typings';
import { metaOf } from './command.ts';
import { errorTable } from './errors.ts';
import { GLOBAL_OPTION_NAMES, VERSION } from './program.ts';

export interface OptionDescription {
  flags: string;
  name: string;
  description: string;
  takesValue: boolean;
  required: boolean;
  default?: unknown;
  choices?: string[];
  negate?: boolean;
  deprecated?: boolean;
}

export interface CommandDescription {
  name: string;
  path: string;
  description: string;
  arguments: Array<{ name: string; description: string; required: boolean; variadic: boolean }>;
  options: OptionDescription[];
  calls: string[];
  destructive: boolean;
  plainText: boolean;
  /** The command does something itself (a leaf, or a group such as `verify` that runs its own checks), rather than only holding subcommands. */
  runnable: boolean;
  commands: CommandDescription[];
}

export interface ProgramDescription {
  name: string;
  version: string;
  description: string;
  globalOptions: OptionDescription[];
  commands: CommandDescription[];
  errors: ReturnType<typeof errorTable>;
}

function describeOption(option: Option): OptionDescription {
  const o = option as Option & { negate: boolean; argChoices?: string[]; mandatory: boolean; required: boolean; optional: boolean };
  return {
    flags: o.flags,
    name: o.attributeName(),
    description: o.description,
    takesValue: o.required || o.optional,
    required: o.mandatory,
    ...(o.defaultValue !== undefined && !o.negate ? { default: o.defaultValue } : {}),
    ...(o.argChoices ? { choices: [...o.argChoices] } : {}),
    ...(o.negate ? { negate: true } : {}),
    ...(o.description.startsWith('deprecated') ? { deprecated: true } : {}),
  };
}

function describeCommand(command: CommandUnknownOpts, parents: string[]): CommandDescription {
  const path = [...parents, command.name()];
  const meta = metaOf(command);
  return {
    name: command.name(),
    path: path.join(' '),
    description: command.description(),
    arguments: command.registeredArguments.map((a) => ({ name: a.name(), description: a.description, required: a.required, variadic: a.variadic })),
    options: command.options.filter((o) => !GLOBAL_OPTION_NAMES.has(o.attributeName()) && !o.hidden).map((o) => describeOption(o)),
    calls: meta?.calls ?? [],
    destructive: meta?.destructive ?? false,
    plainText: meta?.plainText ?? false,
    runnable: (command as unknown as { _actionHandler: unknown })._actionHandler != null,
    commands: command.commands.map((c) => describeCommand(c, path)),
  };
}

/** The command tree as data: what `--describe` prints and `docs/cli.md` is generated from. */
export function describeProgram(program: CommandUnknownOpts): ProgramDescription {
  return {
    name: program.name(),
    version: VERSION,
    description: program.description(),
    globalOptions: program.options.map((o) => describeOption(o)),
    commands: program.commands.map((c) => describeCommand(c, [])),
    errors: errorTable(),
  };
}
