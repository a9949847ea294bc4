import { describe, expect, it } from 'vitest';
import type { CustomObject } from '../custom-object.ts';
import { createEchoSuppression, isOwnWrite, settled } from './echo-suppression.ts';

const object = (metadata: Partial<CustomObject['metadata']> = {}, status: CustomObject['status'] = { observedGeneration: 1 }): CustomObject => ({
  apiVersion: 'platform.svc.dev/v1alpha1',
  kind: 'Tenant',
  metadata: { name: 'acme', uid: 'u-1', generation: 1, resourceVersion: '10', finalizers: ['platform.svc.dev/tenant-cleanup'], ...metadata },
  status,
});

describe('settled', () => {
  it('holds for an object whose spec is observed, with a finalizer, not being deleted', () => {
    expect(settled(object())).toBe(true);
    expect(settled(object({ generation: 2 }))).toBe(false);
    expect(settled(object({ finalizers: [] }))).toBe(false);
    expect(settled(object({ deletionTimestamp: '2026-01-01T00:00:00Z' }))).toBe(false);
    expect(settled(object({}, {}))).toBe(false);
  });
});

describe('isOwnWrite', () => {
  it('takes a patch answer for the reconcile\'s own write only when it shows no spec change or deletion the reconcile did not read', () => {
    const read = object();
    expect(isOwnWrite(read, object({ resourceVersion: '11' }))).toBe(true);
    expect(isOwnWrite(read, object({ resourceVersion: '11', generation: 2 }))).toBe(false);
    expect(isOwnWrite(read, object({ resourceVersion: '11', deletionTimestamp: '2026-01-01T00:00:00Z' }))).toBe(false);
    expect(isOwnWrite(object({ deletionTimestamp: '2026-01-01T00:00:00Z' }), object({ resourceVersion: '11', deletionTimestamp: '2026-01-01T00:00:00Z' }))).toBe(true);
    expect(isOwnWrite(read, undefined)).toBe(false);
    expect(isOwnWrite(read, { metadata: { ...read.metadata, resourceVersion: undefined } })).toBe(false);
  });
});

describe('echo suppression', () => {
  it('ignores the watch event of the last reconcile\'s own write, and reconciles any other unsettled version', () => {
    const echo = createEchoSuppression();
    const changed = object({ resourceVersion: '12', generation: 2 });
    expect(echo.needsReconcile('tenants/acme', changed)).toBe(true);
    const written = echo.begin('tenants/acme');
    written.add('12');
    expect(echo.needsReconcile('tenants/acme', changed)).toBe(false);
    // The same version of another object, and a newer version of this one, are not echoes.
    expect(echo.needsReconcile('tenants/other', changed)).toBe(true);
    expect(echo.needsReconcile('tenants/acme', object({ resourceVersion: '13', generation: 2 }))).toBe(true);
  });

  it('forgets what a reconcile wrote when the next one begins, when the object goes and when leadership ends', () => {
    const echo = createEchoSuppression();
    const pending = object({ resourceVersion: '12', generation: 2 });
    echo.begin('tenants/acme').add('12');
    echo.begin('tenants/acme');
    expect(echo.needsReconcile('tenants/acme', pending)).toBe(true);
    echo.begin('tenants/acme').add('12');
    echo.forget('tenants/acme');
    expect(echo.needsReconcile('tenants/acme', pending)).toBe(true);
    echo.begin('tenants/acme').add('12');
    echo.clear();
    expect(echo.needsReconcile('tenants/acme', pending)).toBe(true);
  });

  it('needs no reconcile of a settled object, echo or not', () => {
    expect(createEchoSuppression().needsReconcile('tenants/acme', object())).toBe(false);
  });
});
