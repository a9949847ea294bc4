import { childSlugIssue } from '../../apps/apps.schema.ts';
import { childSlugOf } from '../app-object.ts';
import { reportApp, type AppRun } from '../app-run.ts';
import { condition, ConditionType, Reason } from '../conditions.ts';
import type { Step } from '../runtime/step-runner.ts';

/** Refuses an App whose child tenant's slug (declared, or derived from its name) is not a valid slug: `Failed` (InvalidChildSlug), no requeue; nothing is created. */
export const checkChildSlug: Step<AppRun> = {
  name: 'CheckChildSlug',
  async run(run) {
    const { spec } = run.object;
    const childSlug = childSlugOf(spec);
    const issue = childSlug === undefined ? undefined : childSlugIssue(childSlug);
    if (!issue) return 'continue';
    const message = `childTenant.slug ${issue} (the name is "${spec.childTenant!.name}")`;
    reportApp(run, 'Failed', condition(ConditionType.Ready, 'False', Reason.InvalidChildSlug, message, run.object.metadata.generation));
    return 'stop';
  },
};
