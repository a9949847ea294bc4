import { execa } from 'execa';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../cli/bin/svc.js', import.meta.url));

export interface SvcRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (undefined when it is not JSON). */
  json: any;
}

/**
 * Runs the real `svc` executable in its own process, stdin not a terminal, with only the
 * environment given (plus PATH and TMPDIR): no CI, NO_COLOR or token leaks in from the test run.
 */
export async function svc(args: string[], env: Record<string, string | undefined> = {}, input?: string, cwd?: string): Promise<SvcRun> {
  const result = await execa('node', [BIN, ...args], {
    env: { PATH: process.env['PATH'], TMPDIR: process.env['TMPDIR'], ...env },
    extendEnv: false,
    ...(cwd ? { cwd } : {}),
    reject: false,
    stripFinalNewline: false,
    ...(input === undefined ? { stdin: 'ignore' as const } : { input }),
    timeout: 30_000,
  });
  let json: unknown;
  try {
    json = JSON.parse(result.stdout);
  } catch {
    json = undefined;
  }
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr, json };
}

/** Replaces ids and timestamps so that text output can be compared from run to run. */
export const normalise = (text: string) =>
  text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>');
