import { childSlugIssue } from '../../apps/apps.schema.ts';
import { childSlugOf } from '../app-object.ts';
import { reportApp, type AppRun } from '../app-run.ts';
import { condition, ConditionType, Reason } from '../conditions.ts';
import type { Step } from '../runtime/step-runner.ts';

/**
 * Refuses an App whose child tenant's slug (declared, or derived from its name) is not a valid
 * slug: `Failed` (InvalidChildSlug), no requeue; nothing is created. `ChildSlugValid` says which
 * (True, too, for an App without a child tenant).
 */
export const checkChildSlug: Step<AppRun> = {
  name: 'CheckChildSlug',
  async run(run) {
    const { spec } = run.object;
    const childSlug = childSlugOf(spec);
    const issue = childSlug === undefined ? undefined : childSlugIssue(childSlug);
    const generation = run.object.metadata.generation;
    if (!issue) {
      const message = childSlug === undefined ? 'the app has no child tenant' : `the child tenant's slug is "${childSlug}"`;
      run.status.condition(condition(ConditionType.ChildSlugValid, 'True', Reason.ChildSlugAccepted, message, generation));
      return 'continue';
    }
    const message = `childTenant.slug ${issue} (the name is "${spec.childTenant!.name}")`;
    run.status.condition(condition(ConditionType.ChildSlugValid, 'False', Reason.InvalidChildSlug, message, generation));
    reportApp(run, 'Failed', condition(ConditionType.Ready, 'False', Reason.InvalidChildSlug, message, generation));
    return 'stop';
  },
};
