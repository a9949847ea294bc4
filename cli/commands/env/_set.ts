import { Option } from '@commander-js/extra-typings';
import type { CommandContext } from '../../context.ts';
import type { SetRef } from '../../services/env.service.ts';

export const labelOption = () => new Option('--label <label>', "the app's label (default: the project's app name, the name in its package.json without a scope)");
export const envOption = () => new Option('--env <environment>', 'the environment').default('dev');

/** The configuration set a command names: the active tenant, `--label` (else the project's app name) and `--env`. */
export async function configSetOf(ctx: CommandContext, options: { label?: string; env: string }): Promise<SetRef> {
  const { resolveLabel } = await import('../../services/env-file.ts');
  const label = await resolveLabel(options.label);
  return { tenantId: await ctx.tenantId(), label, environment: options.env };
}
