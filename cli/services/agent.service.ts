import { writeManifest, type Manifest } from './project.service.ts';
import { agentFiles, applySync, planSync, type SyncStep } from './template.service.ts';

export interface AgentRefreshReport {
  projectDir: string;
  /** `--check`: nothing was written. */
  check: boolean;
  files: SyncStep[];
  summary: { create: number; update: number; conflict: number; unchanged: number };
  /** Files someone changed that were left as they are (no `--force`), or that `--check` found. */
  conflicts: string[];
  /** Whether the project's agent assets equal the client's after this run. */
  upToDate: boolean;
}

/**
 * Brings the project's agent assets (AGENTS.md, .agents/) to the client's: missing ones created,
 * ones the client wrote and nobody changed updated, ones someone changed left alone unless
 * `force` (then saved as `<file>.bak` first). `check` only reports. The manifest records the
 * assets as part of the project, with the hash of each file written.
 */
export async function refreshAgentAssets(projectDir: string, manifest: Manifest, options: { check: boolean; force: boolean }): Promise<AgentRefreshReport> {
  const files = await agentFiles();
  const plan = await planSync(projectDir, files, manifest.template.files);
  let steps = plan;
  if (!options.check) {
    const applied = await applySync(projectDir, files, plan, { conflicts: options.force ? 'backup' : 'skip' });
    steps = applied.steps;
    await writeManifest(projectDir, { ...manifest, template: { ...manifest.template, agent: true, files: { ...manifest.template.files, ...applied.hashes } } });
  }
  const summary = { create: 0, update: 0, conflict: 0, unchanged: 0 };
  for (const step of steps) if (step.action in summary) summary[step.action as keyof typeof summary]++;
  const conflicts = steps.filter((s) => s.action === 'conflict' && !s.backup).map((s) => s.path);
  const upToDate = options.check ? summary.create + summary.update + summary.conflict === 0 : conflicts.length === 0;
  return { projectDir, check: options.check, files: steps, summary, conflicts, upToDate };
}
