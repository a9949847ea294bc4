import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { tail } from './process.ts';
import { reportProgress } from './progress.ts';

export { elapsed } from './progress.ts';

export interface GoCommandOptions {
  /** Arguments after `go`, e.g. `['build', '-o', dir, pkg]`. */
  args: string[];
  cwd: string;
  /** Added to this process's environment (GOFLAGS, GOPROXY and the caches are left as they are). */
  env?: NodeJS.ProcessEnv;
  /** What is built, for progress lines and errors ("kube-apiserver, kubectl and etcd"). */
  label: string;
  /** Said once the go command is found; progress lines follow every few seconds. */
  log?: (message: string) => void;
  /** How long the build typically takes ("5-10 minutes on 2 cores"), said with each progress line. */
  typical?: string;
  /** What to do when Go is not on PATH, appended to the error. */
  missingGoHint: string;
}

/**
 * Runs a `go build` or `go install` (with `-v`, so that packages are counted as they compile),
 * logging the time elapsed, its typical duration, downloaded modules and compiled packages every few seconds. Rejects with the tail of Go's
 * output when it fails.
 */
export async function runGo(opts: GoCommandOptions): Promise<void> {
  const go = findOnPath('go');
  if (!go) throw new Error(`Go is not on PATH to build ${opts.label}. Install Go 1.25 or newer, or ${opts.missingGoHint}`);
  const output: string[] = [];
  let downloaded = 0;
  let compiled = 0;
  const progress = reportProgress({
    label: `building ${opts.label}`,
    typical: opts.typical,
    log: opts.log,
    detail: () => `${downloaded} modules downloaded, ${compiled} packages compiled`,
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(go, opts.args, {
        cwd: opts.cwd,
        env: { ...process.env, CGO_ENABLED: '0', ...opts.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let partial = '';
      const onData = (chunk: Buffer) => {
        const lines = (partial + chunk.toString('utf8')).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) {
          if (line.startsWith('go: downloading ')) downloaded += 1;
          else if (line.trim()) compiled += 1;
          output.push(line);
          if (output.length > 200) output.shift();
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('error', reject);
      child.once('close', (code, signal) => {
        if (partial) output.push(partial);
        if (code === 0) resolve();
        else reject(new Error(`go ${opts.args.join(' ')} (in ${opts.cwd}) failed (${signal ?? `exit code ${code}`}):\n${tail(output.join('\n'))}`));
      });
    });
  } finally {
    progress.stop();
  }
}

export function findOnPath(file: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, file))) return join(dir, file);
  }
  return undefined;
}

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
