import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Named groups of processes; each group counts its root pids and all their descendants. */
export type ProcessGroups = Record<string, number[]>;

/** CPU over a window, in percent of one core, per group, plus `other` (the rest of the machine) and `machine` (all of it). */
export type GroupCpu = Record<string, number> & { other: number; machine: number };

interface ProcessTicks {
  comm: string;
  parent: number;
  ticks: number;
}

export interface CpuSnapshot {
  at: number;
  processes: Map<number, ProcessTicks>;
  machineBusy: number;
}

/** Kernel clock ticks per second, the unit of /proc CPU times. */
export const CLK_TCK = clockTicks();

function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** One process's name, parent and CPU ticks so far, from /proc; undefined when it is gone. */
export function readProcess(pid: number): ProcessTicks | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    return { comm: stat.slice(stat.indexOf('(') + 1, close), parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

function machineBusyTicks(): number {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const ticks = values.map(Number);
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
  return total - ticks[3]! - ticks[4]!;
}

/** Every process's CPU ticks so far, read from /proc. */
export function cpuSnapshot(): CpuSnapshot {
  const processes = new Map<number, ProcessTicks>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const info = readProcess(Number(entry));
    if (info) processes.set(Number(entry), info);
  }
  return { at: performance.now(), processes, machineBusy: machineBusyTicks() };
}

/** The group a process belongs to: the first group holding it or one of its ancestors. */
function groupOf(pid: number, processes: Map<number, ProcessTicks>, roots: Map<number, string>): string | undefined {
  for (let current = pid, hops = 0; current > 1 && hops < 64; hops++) {
    const group = roots.get(current);
    if (group) return group;
    const parent = processes.get(current)?.parent;
    if (parent === undefined) return undefined;
    current = parent;
  }
  return undefined;
}

/** CPU per group between two snapshots; processes that started in between count from zero. */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot, groups: ProcessGroups): GroupCpu {
  const seconds = (after.at - before.at) / 1000;
  const percent = (ticks: number) => Math.round((ticks / CLK_TCK / seconds) * 100);
  const roots = new Map<number, string>();
  for (const [group, pids] of Object.entries(groups)) for (const pid of pids) if (pid > 0) roots.set(pid, group);
  const ticks = new Map<string, number>(Object.keys(groups).map((g) => [g, 0]));
  for (const [pid, end] of after.processes) {
    const group = groupOf(pid, after.processes, roots);
    if (!group) continue;
    const start = before.processes.get(pid);
    const delta = start && start.comm === end.comm ? end.ticks - start.ticks : end.ticks;
    ticks.set(group, ticks.get(group)! + delta);
  }
  const result: Record<string, number> = {};
  let grouped = 0;
  for (const [group, value] of ticks) {
    result[group] = percent(value);
    grouped += result[group];
  }
  const machine = percent(after.machineBusy - before.machineBusy);
  return { ...result, other: Math.max(0, machine - grouped), machine };
}

/** The pids of `root` and every descendant, at the moment of the call. */
export function processTree(root: number): number[] {
  const processes = cpuSnapshot().processes;
  const roots = new Map([[root, 'root']]);
  return [...processes.keys()].filter((pid) => groupOf(pid, processes, roots) !== undefined);
}

/** The resident memory of a process, in bytes (Linux); 0 once it is gone. */
export function residentBytes(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}
