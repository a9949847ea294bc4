import { setTimeout as sleep } from 'node:timers/promises';
import { CLK_TCK, cpuSnapshot as snapshot, readProcess, type CpuSnapshot } from './process-cpu.ts';

/** CPU used during a window, in percent of one core, by the platform, PostgreSQL and the load generator. */
export interface CpuSplit {
  /** The platform's processes: by default this one (the platform in-process, and the benchmark itself, which idles meanwhile). */
  platform: number;
  /** The benchmark's PostgreSQL server: its postmaster and every child (backends, background workers). */
  postgres: number;
  loadGenerator: number;
  /** Everything else on the machine: a measure of how undisturbed the run was. */
  other: number;
}

function split(before: CpuSnapshot, after: CpuSnapshot, pids: WatchedPids): CpuSplit {
  const seconds = (after.at - before.at) / 1000;
  const percent = (ticks: number) => Math.round((ticks / CLK_TCK / seconds) * 100);
  const used = { platform: 0, postgres: 0, loadGenerator: 0 };
  for (const [pid, end] of after.processes) {
    const start = before.processes.get(pid);
    if (!start || start.comm !== end.comm) continue;
    const delta = end.ticks - start.ticks;
    // The load generator and PostgreSQL first: the benchmark's process, which may be the platform's, starts them.
    if (pid === pids.loadGenerator) used.loadGenerator += delta;
    else if (pid === pids.postmaster || end.parent === pids.postmaster) used.postgres += delta;
    else if (descendsFrom(pid, pids.platform ?? process.pid, after.processes)) used.platform += delta;
  }
  const machine = percent(after.machineBusy - before.machineBusy);
  const platform = percent(used.platform);
  const postgres = percent(used.postgres);
  const loadGenerator = percent(used.loadGenerator);
  return { platform, postgres, loadGenerator, other: Math.max(0, machine - platform - postgres - loadGenerator) };
}

/**
 * Measures the CPU split over the middle of a run that lasts `durationMs`: from 1 s after its
 * start to 1 s before its end, so that connection set-up and tear-down stay outside the window.
 * Processes are read from /proc.
 */
export async function sampleCpuDuring(pids: WatchedPids, durationMs: number): Promise<CpuSplit | undefined> {
  const margin = Math.min(1000, durationMs / 4);
  await sleep(margin);
  const before = snapshot();
  await sleep(durationMs - 2 * margin);
  const after = snapshot();
  return after.at > before.at ? split(before, after, pids) : undefined;
}

/** The processes a CPU split tells apart; `postmaster` is undefined when PostgreSQL runs elsewhere. */
export interface WatchedPids {
  loadGenerator: number;
  postmaster?: number;
  /** The platform's process, counted with its children (default: this process). */
  platform?: number;
}

/** Whether `pid` is `root` or one of its descendants. */
function descendsFrom(pid: number, root: number, processes: CpuSnapshot['processes']): boolean {
  for (let current: number | undefined = pid, hops = 0; current !== undefined && current > 1 && hops < 64; hops++) {
    if (current === root) return true;
    current = processes.get(current)?.parent;
  }
  return false;
}

/** The postmaster of a PostgreSQL backend, when that backend runs on this machine. */
export function localPostmasterOf(backendPid: number): number | undefined {
  const backend = readProcess(backendPid);
  return backend?.comm === 'postgres' ? backend.parent : undefined;
}
