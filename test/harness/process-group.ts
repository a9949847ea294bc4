import type { ChildProcess } from 'node:child_process';

/** SIGKILL to a detached child's whole process group (its own children too); a group already gone is fine. */
export function killProcessGroup(child: ChildProcess): void {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
