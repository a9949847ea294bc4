import { describe, expect, it } from 'vitest';
import { condition, type Condition } from '../conditions.ts';
import type { CustomObject } from '../custom-object.ts';
import { requeueAfter, runSteps, type Step, type StepOutcome, type StepRun, type StatusWriter } from './step-runner.ts';

const object = (conditions?: Condition[]): CustomObject => ({
  apiVersion: 'platform.svc.dev/v1alpha1',
  kind: 'Tenant',
  metadata: { name: 'acme', uid: 'u-1', generation: 3 },
  ...(conditions ? { status: { phase: 'Ready', conditions } } : {}),
});

/** A writer that notes, in order, what the runner writes. */
function recording() {
  const log: string[] = [];
  const patches: Record<string, unknown>[] = [];
  const writer: StatusWriter = {
    patch(status) {
      log.push('patch');
      patches.push(status);
      return Promise.resolve();
    },
    event(type, reason) {
      log.push(`event ${type} ${reason}`);
      return Promise.resolve();
    },
  };
  return { log, patches, writer };
}

type Run = StepRun & { ran: string[] };
const start = (target: CustomObject) => (status: Run['status']): Run => ({ object: target, status, ran: [] });
const step = (name: string, body: (run: Run) => StepOutcome | void, more: Partial<Step<Run>> = {}): Step<Run> => ({
  name,
  ...more,
  run(run) {
    run.ran.push(name);
    return Promise.resolve(body(run) ?? 'continue');
  },
});

describe('step runner', () => {
  it('runs the steps in order and writes what they set in one patch, then their Events', async () => {
    const { log, patches, writer } = recording();
    let ran: string[] = [];
    const steps = [
      step('First', ({ status }) => void status.set({ tenantId: 't-1' })),
      step('Second', ({ status }) => {
        status.condition(condition('BlobStorageProvisioned', 'True', 'StorageReady', 'blob is ready', 3));
        status.event('Normal', 'Provisioned', 'ready');
      }),
      step('Third', (run) => {
        run.status.set({ phase: 'Ready', observedGeneration: 3 });
        ran = run.ran;
      }),
    ];
    expect(await runSteps(steps, start(object()), writer)).toBeUndefined();
    expect(ran).toEqual(['First', 'Second', 'Third']);
    expect(log).toEqual(['patch', 'event Normal Provisioned']);
    expect(patches[0]).toMatchObject({ tenantId: 't-1', phase: 'Ready', observedGeneration: 3, conditions: [{ type: 'BlobStorageProvisioned', status: 'True' }] });
  });

  it('stops at a step that stops or requeues, still writing what was set, and returns the requeue', async () => {
    const { patches, writer } = recording();
    const after = step('After', () => {
      throw new Error('must not run');
    });
    const wait = step('Wait', ({ status }) => {
      status.set({ phase: 'Provisioning' });
      return requeueAfter(5_000, { untilNotified: true });
    });
    expect(await runSteps([wait, after], start(object()), writer)).toEqual({ requeueAfterMs: 5_000, untilNotified: true });
    const done = step('Done', ({ status }) => {
      status.set({ phase: 'Failed' });
      return 'stop';
    });
    expect(await runSteps([done, after], start(object()), writer)).toBeUndefined();
    expect(patches).toEqual([{ phase: 'Provisioning' }, { phase: 'Failed' }]);
  });

  it('writes nothing when no step set status, and nothing at all when a step throws', async () => {
    const { log, writer } = recording();
    await runSteps([step('Quiet', () => {})], start(object()), writer);
    const failing = [
      step('Sets', ({ status }) => {
        status.set({ phase: 'Ready' });
        status.event('Normal', 'Provisioned', 'ready');
      }),
      step('Fails', () => {
        throw new Error('the Namespace is missing');
      }),
    ];
    await expect(runSteps(failing, start(object()), writer)).rejects.toThrow('the Namespace is missing');
    expect(log).toEqual([]);
  });

  it('writes the status after a step that asks for it, before the next runs, and only once', async () => {
    const { log, patches, writer } = recording();
    const steps = [
      step('MarkDeleting', ({ status }) => void status.set({ phase: 'Deleting' }), { writeStatusAfter: true }),
      step('CleanUp', ({ status }) => {
        log.push('clean up');
        status.event('Normal', 'Deleted', 'gone');
      }),
    ];
    await runSteps(steps, start(object()), writer);
    expect(log).toEqual(['patch', 'clean up', 'event Normal Deleted']);
    expect(patches).toEqual([{ phase: 'Deleting' }]);
    const late = [steps[0]!, step('Late', ({ status }) => void status.set({ phase: 'Ready' }))];
    await expect(runSteps(late, start(object()), writer)).rejects.toThrow(/already written/);
  });

  it('writes, with the status asked for, the conditions the steps after it announce, and nothing announced when none is written early', async () => {
    const { log, patches, writer } = recording();
    const announcing = step(
      'CleanUp',
      ({ status }) => {
        log.push('clean up');
        status.event('Normal', 'Deleted', 'gone');
      },
      { announce: ({ status }) => status.condition(condition('CleanedUp', 'False', 'Deleting', 'cleaning up', 3)) },
    );
    const mark = step('MarkDeleting', ({ status }) => void status.set({ phase: 'Deleting' }), { writeStatusAfter: true });
    await runSteps([mark, announcing], start(object()), writer);
    expect(log).toEqual(['patch', 'clean up', 'event Normal Deleted']);
    expect(patches[0]).toMatchObject({ phase: 'Deleting', conditions: [{ type: 'CleanedUp', status: 'False', reason: 'Deleting' }] });
    const quiet = recording();
    await runSteps([announcing], start(object()), quiet.writer);
    expect(quiet.log).toEqual(['event Normal Deleted']);
  });

  it('writes Ready first and Degraded last, a condition set twice once, and keeps the transition time of an unchanged one', async () => {
    const { patches, writer } = recording();
    const before = '2026-01-01T00:00:00.000Z';
    const previous: Condition[] = [
      { ...condition('Ready', 'True', 'Provisioned', 'ok', 2), lastTransitionTime: before },
      { ...condition('Degraded', 'False', 'AsExpected', 'no failures', 2), lastTransitionTime: before },
    ];
    const steps = [
      step('Summary', ({ status }) => {
        status.condition(condition('Degraded', 'False', 'AsExpected', 'no failures', 3));
        status.condition(condition('Ready', 'False', 'Provisioning', 'first', 3));
        status.condition(condition('Ready', 'False', 'Provisioning', 'tenant is provisioning', 3));
      }),
      step('Storage', ({ status }) => void status.condition(condition('BlobStorageProvisioned', 'False', 'StoragePending', 'blob is provisioning', 3))),
    ];
    await runSteps(steps, start(object(previous)), writer);
    const conditions = patches[0]!.conditions as Condition[];
    expect(conditions.map((c) => `${c.type}=${c.status}:${c.message}`)).toEqual([
      'Ready=False:tenant is provisioning',
      'BlobStorageProvisioned=False:blob is provisioning',
      'Degraded=False:no failures',
    ]);
    expect(conditions[2]!.lastTransitionTime).toBe(before);
    expect(conditions[0]!.lastTransitionTime).not.toBe(before);
  });
});
