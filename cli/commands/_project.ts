import type { CommandContext } from '../context.ts';
import type { Manifest } from '../services/project.service.ts';

/** The project service, loaded when a command first needs it (it brings the schema library). */
const projectService = () => import('../services/project.service.ts');

/** Each problem on stderr (text output only: JSON output keeps stderr empty) before the E005 it comes with. */
export async function showingProblems<T>(ctx: CommandContext, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const { InvalidProjectError } = await projectService();
    if (error instanceof InvalidProjectError && ctx.out.format === 'text') for (const problem of error.problems) ctx.out.warn(problem);
    throw error;
  }
}

async function invalid(ctx: CommandContext, problems: string[]): Promise<never> {
  const { InvalidProjectError } = await projectService();
  if (ctx.out.format === 'text') for (const problem of problems) ctx.out.warn(problem);
  throw new InvalidProjectError(problems);
}

/** The project around the current folder (E001 when there is none), with a runnable structure (E005 naming what is wrong). */
export async function runnableProject(ctx: CommandContext): Promise<string> {
  const { projectProblems, requireProjectRoot } = await projectService();
  const root = await requireProjectRoot();
  const problems = await projectProblems(root);
  if (problems.length) await invalid(ctx, problems);
  return root;
}

/** The project around the current folder (E001) and its manifest (E005 when it is missing or invalid). */
export async function projectManifest(ctx: CommandContext): Promise<{ root: string; manifest: Manifest }> {
  const { readManifest, requireProjectRoot } = await projectService();
  const root = await requireProjectRoot();
  const { manifest, problems } = await readManifest(root);
  if (!manifest) return invalid(ctx, problems);
  return { root, manifest };
}
