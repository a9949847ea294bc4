import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export interface Finished {
  code: number | null;
  output: string;
}

/** A started child process: its pid (for CPU sampling) and its end, with stdout and stderr merged. */
export interface Running {
  pid: number;
  finished: Promise<Finished>;
}

/** Starts `file` with `args`; rejects `finished` only when it cannot be started. */
export function start(file: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Running {
  const child = spawn(file, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
  const finished = new Promise<Finished>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output: Buffer.concat(chunks).toString('utf8') }));
  });
  return { pid: child.pid ?? -1, finished };
}

/** Runs `file` to its end; throws with the output's tail when it exits non-zero. */
export async function run(file: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<string> {
  const { code, output } = await start(file, args, options).finished;
  if (code !== 0) throw new Error(`${file} ${args.join(' ')} exited with ${code}:\n${tail(output)}`);
  return output;
}

/** The full path of `file` on PATH, if any. */
export function onPath(file: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, file))) return join(dir, file);
  }
  return undefined;
}

export function tail(text: string, lines = 20): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
