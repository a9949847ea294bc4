import pc from 'picocolors';
import { CliError, invalidInput, type ErrorBody } from './errors.ts';

export const FORMATS = ['text', 'json'] as const;
export type Format = (typeof FORMATS)[number];

export type Colors = ReturnType<typeof pc.createColors>;

/** How a value is drawn in text mode; gets the colours of stdout and whether `--simple` is on. */
export type TextRenderer<T> = (value: T, style: { colors: Colors; simple: boolean }) => string;

interface Env {
  [name: string]: string | undefined;
}

/**
 * Colour for one stream: `--color`/`--no-color` decide when given; otherwise none with `NO_COLOR`
 * (any non-empty value) or `TERM=dumb`, and none when the stream is not a terminal.
 */
export function colorEnabled(flag: boolean | undefined, stream: { isTTY?: boolean }, env: Env = process.env): boolean {
  if (flag !== undefined) return flag;
  if (env['NO_COLOR']) return false;
  if (env['TERM'] === 'dumb') return false;
  if (env['FORCE_COLOR'] && env['FORCE_COLOR'] !== '0') return true;
  return stream.isTTY === true;
}

/** Prompts only with a terminal on stdin, outside CI, and without `--no-input`. */
export function promptsAllowed(input: boolean | undefined, env: Env = process.env): boolean {
  if (input === false) return false;
  if (env['CI'] && env['CI'] !== 'false' && env['CI'] !== '0') return false;
  return process.stdin.isTTY === true;
}

export interface OutputOptions {
  format: Format;
  color?: boolean;
  simple: boolean;
  input?: boolean;
}

/**
 * Where everything a command prints goes: data on stdout (JSON exactly as the service returned
 * it, or the command's text rendering), messages, spinners and prompts on stderr.
 */
export class Output {
  readonly format: Format;
  readonly simple: boolean;
  readonly colors: Colors;
  readonly errColors: Colors;
  readonly interactive: boolean;

  constructor(options: OutputOptions) {
    this.format = options.format;
    this.simple = options.simple;
    this.colors = pc.createColors(colorEnabled(options.simple ? false : options.color, process.stdout));
    this.errColors = pc.createColors(colorEnabled(options.simple ? false : options.color, process.stderr));
    this.interactive = promptsAllowed(options.input);
  }

  /** Prints a service's result: the same object as JSON, or as the renderer draws it. */
  data<T>(value: T, text?: TextRenderer<T>): void {
    if (this.format === 'json' || !text) {
      process.stdout.write(JSON.stringify(value, null, 2) + '\n');
      return;
    }
    const rendered = text(value, { colors: this.colors, simple: this.simple });
    if (rendered) process.stdout.write(rendered.endsWith('\n') ? rendered : rendered + '\n');
  }

  /** Plain text that is the command's output even in JSON mode (commands documented as plain text only). */
  text(line: string): void {
    process.stdout.write(line + '\n');
  }

  info(message: string): void {
    process.stderr.write(message + '\n');
  }

  success(message: string): void {
    process.stderr.write(`${this.simple ? '' : this.errColors.green('✓ ')}${message}\n`);
  }

  warn(message: string): void {
    process.stderr.write(`${this.errColors.yellow(this.simple ? 'Warning: ' : '! ')}${message}\n`);
  }

  /** The error as `{error: {...}}` on stdout with `--format json`, else two lines on stderr. */
  error(error: CliError): void {
    const body: ErrorBody = error.toJSON();
    if (this.format === 'json') {
      process.stdout.write(JSON.stringify({ error: body }, null, 2) + '\n');
      return;
    }
    const c = this.errColors;
    process.stderr.write(`${c.red(c.bold(`Error ${body.code}`))}: ${body.message}\n`);
    process.stderr.write(`${this.simple ? 'Suggestion: ' : c.dim('→ ')}${body.suggestion}\n`);
  }

  /**
   * Runs `work` under a spinner on stderr when stderr is a terminal (never with `--simple`); with
   * `elapsed`, the spinner counts the seconds (long waits such as provisioning).
   */
  async spin<T>(text: string, work: () => Promise<T>, options: { elapsed?: boolean } = {}): Promise<T> {
    if (this.simple || !process.stderr.isTTY || this.format === 'json') return work();
    const { default: ora } = await import('ora');
    // ora colours through chalk, which does not know NO_COLOR: the spinner follows the client's own decision.
    const spinner = ora({ text, stream: process.stderr, color: this.errColors.isColorSupported ? 'cyan' : false }).start();
    const started = Date.now();
    const ticker = options.elapsed ? setInterval(() => (spinner.text = `${text} (${Math.round((Date.now() - started) / 1000)}s)`), 1000) : undefined;
    try {
      return await work();
    } finally {
      clearInterval(ticker);
      spinner.stop();
    }
  }

  /**
   * Runs `work` with a progress bar of `total` bytes on stderr when stderr is a terminal (never with
   * `--simple` or JSON output); `work` reports each chunk it has sent through `advance`.
   */
  async progress<T>(text: string, total: number, work: (advance: (bytes: number) => void) => Promise<T>): Promise<T> {
    if (this.simple || !process.stderr.isTTY || this.format === 'json') return work(() => {});
    const { default: cliProgress } = await import('cli-progress');
    const bar = new cliProgress.SingleBar(
      { format: `${text} [{bar}] {percentage}% {value}/{total} bytes`, stream: process.stderr, hideCursor: true, clearOnComplete: true },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0);
    let sent = 0;
    try {
      return await work((bytes) => bar.update((sent += bytes)));
    } finally {
      bar.stop();
    }
  }

  /**
   * Asks for confirmation, or refuses without asking when prompts are off (no TTY, `CI`,
   * `--no-input`): the message names the flag that skips the question.
   */
  async confirm(question: string, flag: string): Promise<void> {
    if (!this.interactive) {
      throw invalidInput(`confirmation required and prompts are off (no terminal, CI or --no-input): pass ${flag}`);
    }
    const prompts = await import('@clack/prompts');
    const answer = await prompts.confirm({ message: question, initialValue: false, output: process.stderr });
    if (prompts.isCancel(answer) || answer !== true) throw invalidInput(`not confirmed; pass ${flag} to skip the question`);
  }

  /** Lets the user pick one of `choices`, or fails naming what to pass when prompts are off. */
  async select<T extends string>(question: string, choices: Array<{ value: T; label: string; hint?: string }>, missing: string): Promise<T> {
    if (!this.interactive) throw new CliError('E303', { field: missing });
    const prompts = await import('@clack/prompts');
    const answer = await prompts.select<string>({ message: question, options: choices, output: process.stderr });
    if (prompts.isCancel(answer)) throw invalidInput('cancelled at the prompt');
    return answer as T;
  }
}

/** Columns aligned with spaces; with `--simple`, one `header: value` line per cell and a blank line between rows. */
export function table(headers: string[], rows: string[][], style: { colors: Colors; simple: boolean }): string {
  // A screen reader says "…" as a symbol name: plain dots in simple output.
  if (style.simple) return rows.map((row) => row.map((cell, i) => `${headers[i]}: ${cell.replace(/…$/, '...')}`).join('\n')).join('\n\n');
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  return [style.colors.bold(line(headers)), ...rows.map(line)].join('\n');
}

/** `key: value` lines, keys aligned. */
export function fields(entries: Array<[string, string]>, style: { colors: Colors; simple: boolean }): string {
  const width = Math.max(...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => (style.simple ? `${k}: ${v}` : `${style.colors.dim(k.padEnd(width))}  ${v}`)).join('\n');
}

/** An object's top-level fields as `key  value` lines: lists joined with commas, objects as one-line JSON. */
export const renderRecord: TextRenderer<Record<string, unknown>> = (value, style) =>
  fields(
    Object.entries(value).map(([key, v]): [string, string] => [
      key,
      v === null || v === undefined ? '-' : Array.isArray(v) && v.every((item) => typeof item !== 'object') ? v.join(', ') : typeof v === 'string' ? v : JSON.stringify(v),
    ]),
    style,
  );

/** A short one-line form of a value for table cells. */
export function brief(value: unknown, max = 60): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? '';
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}
