import { fileURLToPath } from 'node:url';
import { isRoot } from '../../control-plane/app/state-dir.ts';
import { onPath, run, start, tail } from './child.ts';
import { sampleCpuDuring, type CpuSplit } from './cpu.ts';
import type { Measurement } from './latency.ts';

const LUA_SCRIPT = fileURLToPath(new URL('./http-load.lua', import.meta.url));

/** The path of `wrk`, installing Debian's package with apt-get when it is absent. */
export async function ensureWrk(log: (msg: string) => void): Promise<string> {
  const found = onPath('wrk');
  if (found) return found;
  const sudo = isRoot() ? [] : ['sudo', '-n'];
  const aptGet = [...sudo, 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', '-o', 'DPkg::Lock::Timeout=300'];
  for (const step of [['update'], ['install', '-y', 'wrk']]) {
    log(`wrk not found: running ${[...aptGet, ...step].join(' ')}`);
    await run(aptGet[0]!, [...aptGet.slice(1), ...step]);
  }
  const installed = onPath('wrk');
  if (!installed) throw new Error('apt-get installed wrk, but it is not on PATH');
  return installed;
}

export interface WrkOptions {
  /** Origin of the edge, e.g. http://127.0.0.1:40123. */
  url: string;
  token: string;
  /** A file with the request paths the Lua script rotates over. */
  pathsFile: string;
  connections: number;
  threads: number;
  seconds: number;
  /** PostgreSQL's postmaster, to tell its CPU apart. */
  postmaster?: number;
  /** The platform's process when it is not this one (its children count with it). */
  platform?: number;
  /** Another method than GET, with a JSON body file sent on every request. */
  method?: string;
  bodyFile?: string;
  /** Another Lua script than the request-rotating one, given `token`, `pathsFile` and `scriptArgs`. */
  script?: string;
  scriptArgs?: string[];
}

export interface WrkResult extends Measurement {
  /** Requests completed in the run. */
  requests: number;
  cpu?: CpuSplit;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function durationMs(text: string | undefined): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text ?? '');
  return match ? Number(match[1]) * UNIT_MS[match[2]!]! : Number.NaN;
}

/** Runs wrk with `--latency` and the request-rotating Lua script; parses rate, percentiles and errors. */
export async function runWrk(bin: string, options: WrkOptions): Promise<WrkResult> {
  const args = [
    `-t${options.threads}`,
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    '--latency',
    '--timeout',
    '60s',
    '-s',
    options.script ?? LUA_SCRIPT,
    options.url,
    '--',
    options.token,
    options.pathsFile,
    ...(options.method ? [options.method, ...(options.bodyFile ? [options.bodyFile] : [])] : []),
    ...(options.scriptArgs ?? []),
  ];
  const running = start(bin, args);
  const [{ code, output }, cpu] = await Promise.all([running.finished, sampleCpuDuring({ loadGenerator: running.pid, postmaster: options.postmaster, platform: options.platform }, options.seconds * 1000)]);
  const rate = Number(/^Requests\/sec:\s+([\d.]+)/m.exec(output)?.[1]);
  if (code !== 0 || !Number.isFinite(rate)) throw new Error(`wrk failed (exit ${code}):\n${tail(output)}`);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const socketErrors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  return {
    rate,
    requests: Number(/^\s*(\d+) requests in /m.exec(output)?.[1]),
    p50Ms: durationMs(/^\s+50%\s+(\S+)/m.exec(output)?.[1]),
    p99Ms: durationMs(/^\s+99%\s+(\S+)/m.exec(output)?.[1]),
    errors: non2xx + socketErrors,
    cpu,
  };
}
