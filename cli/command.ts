import { Option, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { readFile } from 'node:fs/promises';
import { CliError, invalidInput } from './errors.ts';
import { FORMATS, type Format } from './output.ts';

/** What the command tree cannot say itself: the v4 calls a command makes, and whether it destroys. */
export interface CommandMeta {
  /** `METHOD /path` of each API call, in order; empty for local commands. */
  calls: string[];
  /** Asks for confirmation, or takes `--force`. */
  destructive?: boolean;
  /** Output is plain text only (no `--format`). */
  plainText?: boolean;
}

const metas = new WeakMap<CommandUnknownOpts, CommandMeta>();

/** Attaches the meta to a command and returns the command. */
export function withMeta<C extends CommandUnknownOpts>(command: C, meta: CommandMeta): C {
  metas.set(command, meta);
  return command;
}

export const metaOf = (command: CommandUnknownOpts): CommandMeta | undefined => metas.get(command);

/** `--format <text|json>` (default text); an unknown value is E304. */
export const formatOption = () =>
  new Option('--format <format>', 'output format')
    .choices(FORMATS)
    .default('text')
    .argParser((value): Format => {
      if ((FORMATS as readonly string[]).includes(value)) return value as Format;
      throw new CliError('E304', { details: `--format ${value}`, validFormats: FORMATS.join(', ') });
    });

/** The legacy `--json` flag: as `--format json`, with a deprecation note on stderr. */
export const jsonOption = () => new Option('--json', 'deprecated: use --format json');

export const tenantIdOption = () => new Option('--tenant-id <id>', 'tenant id or slug (default: the selected tenant)');

/** Parses a whole number of at least `min`; anything else is E305 naming the option. */
export const wholeNumber =
  (option: string, min = 1) =>
  (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min) throw invalidInput(`${option} must be a whole number of at least ${min}, not "${value}"`);
    return Number(value);
  };

/** A whole-number option with a default. */
export const intOption = <const Flags extends string>(flags: Flags, description: string, defaultValue: number) =>
  new Option<Flags>(flags, description).default(defaultValue).argParser(wholeNumber(flags.split(' ')[0]!));

/** A JSON value given on the command line, named by its option for the error. */
export function parseJson(text: string, option: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalidInput(`${option} is not valid JSON: ${(error as Error).message}`);
  }
}

/** A JSON object given on the command line. */
export function parseJsonObject(text: string, option: string): Record<string, unknown> {
  const value = parseJson(text, option);
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalidInput(`${option} must be a JSON object`);
  return value as Record<string, unknown>;
}

/** The JSON body of `--data <json>` or `--file <path>` (`-` reads stdin); one of them is required unless `optional`. */
export async function jsonInput(options: { data?: string; file?: string }, optional = false): Promise<unknown> {
  if (options.data !== undefined && options.file !== undefined) throw invalidInput('give --data or --file, not both');
  if (options.data !== undefined) return parseJson(options.data, '--data');
  if (options.file !== undefined) {
    let text: string;
    try {
      text = options.file === '-' ? await readStdin() : await readFile(options.file, 'utf8');
    } catch (error) {
      throw invalidInput(`cannot read --file ${options.file}: ${(error as Error).message}`);
    }
    return parseJson(text, `--file ${options.file}`);
  }
  if (optional) return undefined;
  throw new CliError('E303', { field: '--data or --file' });
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The parser of a repeatable option: each use adds its value (`--param a=1 --param b=2`). */
export const collect = (value: string, previous: string[]) => [...previous, value];

/** A comma-separated list, empty entries dropped. */
export const csv = (value: string | undefined) =>
  value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
