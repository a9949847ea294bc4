/**
 * The client's error codes: one table maps each code to its message template, suggestion and
 * exit code. `{x}` tokens are filled from the context the command passes. Everything the client
 * reports as a failure is a `CliError` of this table; nothing else reaches the user.
 */

export const EXIT_CODES = {
  /** The platform answered with an error the client has no more specific code for. */
  apiError: 1,
  /** Invalid input: options, arguments, JSON, a confirmation that could not be asked. */
  input: 2,
  /** The local project or configuration is missing or broken. */
  config: 3,
  /** Not logged in, token expired or refused. */
  auth: 4,
  /** The platform has no such thing. */
  notFound: 5,
  /** The caller lacks the permission. */
  forbidden: 6,
  /** The change conflicts with what is stored (a version, a taken name). */
  conflict: 7,
  /** The platform could not be reached. */
  unreachable: 8,
  /** A check the command ran failed (doctor, verify): the report says which. */
  checksFailed: 9,
} as const;

export interface ErrorEntry {
  message: string;
  suggestion: string;
  exitCode: number;
}

export const ERRORS = {
  E001: { message: 'Not in an svc project', suggestion: 'run init or go to an existing project directory', exitCode: EXIT_CODES.config },
  E002: {
    message: '{var} environment variable not set',
    suggestion: 'set {var}; tenant selection comes from login and tenant select, not from tenant ids in `.env.local`',
    exitCode: EXIT_CODES.config,
  },
  E003: { message: 'Configuration file not found: {file}', suggestion: 'make sure the file exists; run init for a new project', exitCode: EXIT_CODES.config },
  E004: { message: 'Object Types file not found or invalid', suggestion: 'create the object-types file', exitCode: EXIT_CODES.config },
  E005: { message: 'Invalid project structure', suggestion: 'run verify', exitCode: EXIT_CODES.config },
  E006: { message: 'Failed to load configuration: {details}', suggestion: 'check `.env.local` and the config file for syntax errors', exitCode: EXIT_CODES.config },
  E101: { message: 'Not logged in', suggestion: 'run login', exitCode: EXIT_CODES.auth },
  E102: { message: 'Access token expired', suggestion: 'run login to refresh', exitCode: EXIT_CODES.auth },
  E103: { message: 'Invalid credentials', suggestion: 'verify credentials and log in again', exitCode: EXIT_CODES.auth },
  E104: { message: 'Authentication failed: {details}', suggestion: 'contact an administrator or log in again', exitCode: EXIT_CODES.auth },
  E201: { message: 'Platform API unreachable: {url}', suggestion: 'check the network and `BASE_URL_PUBLIC_API`', exitCode: EXIT_CODES.unreachable },
  E202: { message: '{resource} not found', suggestion: 'verify the id or name', exitCode: EXIT_CODES.notFound },
  E203: { message: 'Platform API error: {details}', suggestion: 'read the details; contact support if persistent', exitCode: EXIT_CODES.apiError },
  E204: { message: 'Permission denied', suggestion: 'lacking permission; contact an administrator', exitCode: EXIT_CODES.forbidden },
  E205: { message: 'Resource conflict: {details}', suggestion: 'the resource exists or conflicts with existing data', exitCode: EXIT_CODES.conflict },
  E301: { message: 'Invalid schema: {details}', suggestion: 'fix the listed schema errors', exitCode: EXIT_CODES.input },
  E302: { message: 'Validation failed: {details}', suggestion: 'correct the errors and retry', exitCode: EXIT_CODES.input },
  E303: { message: 'Required field missing: {field}', suggestion: 'provide a value for {field}', exitCode: EXIT_CODES.input },
  E304: { message: 'Invalid format: {details}', suggestion: 'valid formats are {validFormats}', exitCode: EXIT_CODES.input },
  E305: { message: 'Invalid input: {details}', suggestion: 'check the input and retry', exitCode: EXIT_CODES.input },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCodeName = keyof typeof ERRORS;

/** The `{x}` tokens of a template, as a union of their names. */
type Tokens<S extends string> = S extends `${string}{${infer Name}}${infer Rest}` ? Name | Tokens<Rest> : never;
type VarsOf<C extends ErrorCodeName> = Tokens<(typeof ERRORS)[C]['message']> | Tokens<(typeof ERRORS)[C]['suggestion']>;

/** The JSON form of an error, printed as `{error: ...}` with `--format json`. */
export interface ErrorBody {
  code: ErrorCodeName;
  message: string;
  suggestion: string;
  exitCode: number;
}

const fill = (template: string, vars: Record<string, string>) => template.replace(/\{(\w+)\}/g, (whole, name: string) => vars[name] ?? whole);

/** A failure the client reports: its code picks the message, suggestion and exit code. */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly code: ErrorCodeName;
  readonly suggestion: string;
  readonly exitCode: number;

  constructor(...[code, vars, options]: CliErrorArgs) {
    const entry: ErrorEntry = ERRORS[code];
    const values = (vars ?? {}) as Record<string, string>;
    super(fill(entry.message, values), options);
    this.code = code;
    this.suggestion = fill(entry.suggestion, values);
    this.exitCode = entry.exitCode;
  }

  toJSON(): ErrorBody {
    return { code: this.code, message: this.message, suggestion: this.suggestion, exitCode: this.exitCode };
  }
}

type CliErrorArgs = {
  [C in ErrorCodeName]: [VarsOf<C>] extends [never]
    ? [code: C, vars?: Record<string, never>, options?: { cause?: unknown }]
    : [code: C, vars: Record<VarsOf<C>, string>, options?: { cause?: unknown }];
}[ErrorCodeName];

/** Shorthand for the most common one: invalid input, with what was wrong. */
export const invalidInput = (details: string) => new CliError('E305', { details });

/** Every code with its template, suggestion and exit code, in table order. */
export function errorTable(): Array<{ code: ErrorCodeName } & ErrorEntry> {
  return (Object.keys(ERRORS) as ErrorCodeName[]).map((code) => ({ code, ...ERRORS[code] }));
}
