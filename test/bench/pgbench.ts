import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleCpuDuring, type CpuSplit } from './cpu.ts';
import { onPath, run, start, tail } from './child.ts';
import { quantile, type Measurement } from './latency.ts';
import type { Statement } from './statements.ts';

const DEBIAN_PG_ROOT = '/usr/lib/postgresql';

/** pgbench of the highest installed PostgreSQL (Debian's layout), else the one on PATH. */
export function findPgbench(): string {
  const majors = existsSync(DEBIAN_PG_ROOT) ? readdirSync(DEBIAN_PG_ROOT).filter((d) => /^\d+$/.test(d)).sort((a, b) => Number(b) - Number(a)) : [];
  const debian = majors.map((m) => join(DEBIAN_PG_ROOT, m, 'bin', 'pgbench')).find((file) => existsSync(file));
  const found = debian ?? onPath('pgbench');
  if (!found) throw new Error('pgbench not found: it ships with PostgreSQL (Debian: postgresql-client-<major>)');
  return found;
}

/** Connection arguments and environment for a PostgreSQL URL. */
function connection(url: string): { args: string[]; env: NodeJS.ProcessEnv } {
  const u = new URL(url);
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PG')));
  if (u.password) env.PGPASSWORD = decodeURIComponent(u.password);
  const args = ['-h', u.hostname, '-p', u.port || '5432', '-U', decodeURIComponent(u.username || 'postgres'), u.pathname.slice(1)];
  return { args, env };
}

/** `pgbench -i -s <scale>` into the database of `url`. */
export async function initPgbench(bin: string, url: string, scale: number): Promise<void> {
  const { args, env } = connection(url);
  await run(bin, ['-i', '-q', '-s', String(scale), ...args], { env });
}

/**
 * Rewrites a statement for a pgbench script without changing what the server runs: `$n` becomes
 * `:name` (pgbench binds it as `$n` again in prepared mode), and a `:` inside a string literal or
 * quoted identifier is escaped (`E'..\x3A..'`, `U&"..\003A.."`), because pgbench would read `:MI`
 * in `'HH24:MI:SS'` as a variable. The server parses both spellings to the same constant or name.
 */
export function toPgbenchSql(sql: string, names: readonly string[]): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'") {
      let end = i + 1;
      while (end < sql.length && !(sql[end] === "'" && sql[end + 1] !== "'")) end += sql[end] === "'" ? 2 : 1;
      const literal = sql.slice(i, end + 1);
      const escapeString = /(^|\W)[eE]$/.test(out);
      if (!literal.includes(':')) out += literal;
      else if (escapeString) out += literal.replaceAll(':', '\\x3A');
      else out += `E${literal.replaceAll('\\', '\\\\').replaceAll(':', '\\x3A')}`;
      i = end + 1;
    } else if (c === '"') {
      const end = sql.indexOf('"', i + 1);
      const stop = end < 0 ? sql.length : end + 1;
      const identifier = sql.slice(i, stop);
      out += identifier.includes(':') ? `U&${identifier.replaceAll('\\', '\\\\').replaceAll(':', '\\003A')}` : identifier;
      i = stop;
    } else if (c === '$' && /\d/.test(sql[i + 1] ?? '')) {
      const digits = /^\d+/.exec(sql.slice(i + 1))![0];
      const name = names[Number(digits) - 1];
      if (!name) throw new Error(`no variable for $${digits} in: ${sql}`);
      out += `:${name}`;
      i += 1 + digits.length;
    } else {
      out += c;
      i += 1;
    }
  }
  return `${out.trim().replace(/;$/, '')};`;
}

/** A pgbench script and how often pgbench picks it relative to the others (`-f file@weight`). */
export interface PgbenchScript {
  text: string;
  weight: number;
}

export interface PgbenchScripts {
  scripts: PgbenchScript[];
  /** Variables for `-D`: the statements' parameter values. */
  variables: Record<string, string>;
  /** The scripts whose transactions are reported, together (the others only prepare variables). */
  reported: number[];
}

/**
 * Turns a captured request into a pgbench script that replays its statements with their
 * parameters, passed with `-D`. `pipeline` marks statements the platform sends back to back
 * (`\startpipeline`..`\endpipeline`); `vary` binds the parameter holding `value` to `:variable`
 * instead, so that another script can change it; `prefix` names the other variables apart from
 * those of another script replayed in the same run.
 */
export function replayScript(
  statements: Statement[],
  options: { pipeline?: [number, number]; vary?: { value: string; variable: string }; prefix?: string } = {},
): { text: string; variables: Record<string, string> } {
  const variables: Record<string, string> = {};
  const lines: string[] = [];
  statements.forEach((statement, i) => {
    const names = statement.params.map((value, j) => {
      if (value === null) throw new Error(`statement ${i + 1} has a NULL parameter, which pgbench -D cannot pass`);
      const name = options.vary?.value === value ? options.vary.variable : `${options.prefix ?? 's'}${i}_${j}`;
      variables[name] = value;
      return name;
    });
    if (options.pipeline?.[0] === i) lines.push('\\startpipeline');
    lines.push(toPgbenchSql(statement.sql, names));
    if (options.pipeline?.[1] === i) lines.push('\\endpipeline');
  });
  return { text: `${lines.join('\n')}\n`, variables };
}

/** Picks among mixed scripts: weights are integers, so shares are resolved to 1 in SHARE_SCALE (49 x 20, so that a lookup once in 50 stays exact). */
const SHARE_SCALE = 980;

/** `scripts`, each picked for its `share` (summing to 1) of the transactions, reported together. */
export function mixed(scripts: Array<{ text: string; variables: Record<string, string>; share: number }>): PgbenchScripts {
  const picked = scripts.map((script) => ({ text: script.text, weight: Math.round(script.share * SHARE_SCALE) })).filter((script) => script.weight > 0);
  return { scripts: picked, variables: Object.assign({}, ...scripts.map((script) => script.variables)), reported: picked.map((_, i) => i) };
}

/**
 * `workload`, plus a rarely picked script that sets `:variable` to a random id of `table` (n, id),
 * numbered 1..`count`. pgbench variables are numeric unless set by `-D` or `\gset`, and `\gset`
 * cannot run inside a pipeline, so the lookup is a transaction of its own: its cost stays out of
 * the reported scripts' rate and latencies (it takes 1 in `every` transactions of the clients).
 * Each client also draws its own id before its first transaction: the `-D` value all clients
 * start from would otherwise have every client write the same row until its first lookup, and
 * wait for the others' locks, which no client of the platform's benchmark does.
 */
export function withRandomId(workload: PgbenchScripts, lookup: { table: string; count: number; variable: string; every: number }): PgbenchScripts {
  const draw = `\\set n random(1, ${lookup.count})\nselect id::text as ${lookup.variable} from ${lookup.table} where n = :n \\gset\n`;
  const drawn = `${lookup.variable}_drawn`;
  const drawOnce = `\\if :${drawn} = 0\n${draw}\\set ${drawn} 1\n\\endif\n`;
  const others = workload.scripts.reduce((sum, script) => sum + script.weight, 0);
  return {
    ...workload,
    scripts: [
      ...workload.scripts.map((script) => ({ ...script, text: drawOnce + script.text })),
      { text: draw, weight: Math.max(1, Math.round(others / (lookup.every - 1))) },
    ],
    variables: { ...workload.variables, [drawn]: '0' },
  };
}

export interface PgbenchOptions {
  url: string;
  clients: number;
  threads: number;
  seconds: number;
  /** Built-in (`['-S']`) or custom scripts. */
  scripts: PgbenchScripts | 'select-only';
  /** Write per-transaction logs (`-l`) and compute percentiles from them. */
  percentiles: boolean;
  /** PostgreSQL's postmaster, to tell its CPU apart. */
  postmaster?: number;
}

export interface PgbenchResult extends Measurement {
  cpu?: CpuSplit;
}

/** Runs pgbench in prepared mode and returns tps (without connection time) and latency percentiles. */
export async function runPgbench(bin: string, options: PgbenchOptions): Promise<PgbenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-pgbench-'));
  try {
    const args = ['-n', '-M', 'prepared', '-c', String(options.clients), '-j', String(options.threads), '-T', String(options.seconds)];
    if (options.scripts === 'select-only') {
      args.push('-S');
    } else {
      for (const [k, script] of options.scripts.scripts.entries()) {
        const file = join(dir, `script-${k}.sql`);
        await writeFile(file, script.text);
        args.push('-f', `${file}@${script.weight}`);
      }
      for (const [name, value] of Object.entries(options.scripts.variables)) args.push('-D', `${name}=${value}`);
    }
    if (options.percentiles) args.push('-l', '--log-prefix', join(dir, 'tx'));
    const { args: target, env } = connection(options.url);
    const running = start(bin, [...args, ...target], { env, cwd: dir });
    const [finished, cpu] = await Promise.all([running.finished, sampleCpuDuring({ loadGenerator: running.pid, postmaster: options.postmaster }, options.seconds * 1000)]);
    const reported = options.scripts === 'select-only' || options.scripts.scripts.length === 1 ? undefined : options.scripts.reported;
    const summary = summarize(finished.output, reported);
    if (finished.code !== 0 || !Number.isFinite(summary.tps)) throw new Error(`pgbench failed (exit ${finished.code}):\n${tail(finished.output)}`);
    const latencies = options.percentiles ? readLatencies(dir, reported) : new Float64Array();
    return {
      rate: summary.tps,
      p50Ms: latencies.length ? quantile(latencies, 0.5) : summary.latencyAverage,
      p99Ms: latencies.length ? quantile(latencies, 0.99) : Number.NaN,
      errors: summary.failed,
      cpu,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The run's tps (without connection time), and one script's in its own section of the summary. */
const RUN_TPS = /^tps = ([\d.]+) \(without initial connection time\)/m;
const SCRIPT_TPS = /transactions \(.*tps = ([\d.]+)\)/;

/** tps, failures and average latency from pgbench's summary of the run, or of one script's section. */
function summaryOf(text: string, tps: RegExp): { tps: number; failed: number; latencyAverage: number } {
  return {
    tps: Number(tps.exec(text)?.[1]),
    failed: Number(/number of failed transactions: (\d+)/.exec(text)?.[1] ?? 0),
    latencyAverage: Number(/latency average = ([\d.]+) ms/.exec(text)?.[1]),
  };
}

/** tps (without connection time), failures and average latency: of the run, or of the `reported` scripts together (0-based). */
function summarize(output: string, reported: number[] | undefined): { tps: number; failed: number; latencyAverage: number } {
  if (reported === undefined) return summaryOf(output, RUN_TPS);
  const sections = output.split(/^SQL script /m);
  const parts = reported.map((script) => summaryOf(sections.find((part) => part.startsWith(`${script + 1}:`)) ?? '', SCRIPT_TPS));
  const tps = parts.reduce((sum, part) => sum + part.tps, 0);
  return {
    tps,
    failed: parts.reduce((sum, part) => sum + part.failed, 0),
    latencyAverage: parts.reduce((sum, part) => sum + part.latencyAverage * part.tps, 0) / tps,
  };
}

/** Latencies in milliseconds from pgbench's `-l` logs (columns: client, tx, latency µs, script, ...). */
function readLatencies(dir: string, scripts: number[] | undefined): Float64Array {
  const values: number[] = [];
  for (const file of readdirSync(dir).filter((f) => f.startsWith('tx.'))) {
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const [, , micros, scriptNo] = line.split(' ');
      if (micros && /^\d+$/.test(micros) && (scripts === undefined || scripts.includes(Number(scriptNo)))) values.push(Number(micros) / 1000);
    }
  }
  return Float64Array.from(values);
}
