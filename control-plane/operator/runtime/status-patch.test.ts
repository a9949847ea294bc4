import { describe, expect, it } from 'vitest';
import type { Condition } from '../conditions.ts';
import type { CustomObject } from '../custom-object.ts';
import { statusUnchanged } from './status-patch.ts';

const object = (status: CustomObject['status']): CustomObject => ({
  apiVersion: 'platform.svc.dev/v1alpha1',
  kind: 'Tenant',
  metadata: { name: 'acme', uid: 'u-1', generation: 2 },
  status,
});

const ready: Condition = { type: 'Ready', status: 'True', reason: 'Provisioned', message: 'ok', observedGeneration: 2, lastTransitionTime: '2026-01-01T00:00:00.000Z' };

describe('statusUnchanged', () => {
  it('holds when every written field equals the current one, whatever the key order', () => {
    const current = object({ phase: 'Ready', observedGeneration: 2, conditions: [ready], storage: [{ backend: 'blob', status: 'ready' }] });
    const reordered = { ...ready, lastTransitionTime: ready.lastTransitionTime, type: 'Ready' };
    expect(statusUnchanged(current, { storage: [{ status: 'ready', backend: 'blob' }], conditions: [reordered], phase: 'Ready', homeRegion: undefined })).toBe(true);
  });

  it('fails on any changed, added or reordered value', () => {
    const current = object({ phase: 'Provisioning', observedGeneration: 2, conditions: [ready] });
    expect(statusUnchanged(current, { phase: 'Ready' })).toBe(false);
    expect(statusUnchanged(current, { observedGeneration: 3 })).toBe(false);
    expect(statusUnchanged(current, { tenantId: 't-1' })).toBe(false);
    expect(statusUnchanged(current, { conditions: [{ ...ready, message: 'changed' }] })).toBe(false);
    expect(statusUnchanged(object(undefined), { phase: 'Provisioning' })).toBe(false);
    const degraded: Condition = { ...ready, type: 'Degraded', status: 'False', reason: 'AsExpected' };
    expect(statusUnchanged(object({ conditions: [ready, degraded] }), { conditions: [degraded, ready] })).toBe(false);
  });

  it('leaves fields it does not write out of the comparison, as a merge patch does', () => {
    expect(statusUnchanged(object({ phase: 'Ready', namespace: 'tenant-acme' }), { phase: 'Ready' })).toBe(true);
  });
});
