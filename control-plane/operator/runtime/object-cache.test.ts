import { describe, expect, it } from 'vitest';
import type { CustomObject } from '../custom-object.ts';
import { createObjectCache } from './object-cache.ts';

const version = (resourceVersion: string, metadata: Partial<CustomObject['metadata']> = {}): CustomObject => ({
  apiVersion: 'platform.svc.dev/v1alpha1',
  kind: 'App',
  metadata: { name: 'portal', uid: 'u-1', generation: 1, resourceVersion, finalizers: ['platform.svc.dev/app-cleanup'], ...metadata },
});

describe('controller object cache', () => {
  it('keeps the newest watched copy, and none of a deleted object', () => {
    const cache = createObjectCache();
    cache.observe('apps/portal', 'ADDED', version('1'));
    cache.observe('apps/portal', 'MODIFIED', version('2'));
    expect(cache.get('apps/portal')?.metadata.resourceVersion).toBe('2');
    cache.observe('apps/portal', 'DELETED', version('3'));
    expect(cache.get('apps/portal')).toBeUndefined();
  });

  it('takes a patch answer while the copy is the one the reconcile read or its own write, and not after a newer event', () => {
    const cache = createObjectCache();
    const read = version('1');
    cache.observe('apps/portal', 'ADDED', read);
    const written = new Set<string>();
    const keeper = cache.keeperFor('apps/portal', read, written);
    keeper.keep(version('2'));
    written.add('2');
    expect(cache.get('apps/portal')?.metadata.resourceVersion).toBe('2');
    keeper.keep(version('3'));
    expect(cache.get('apps/portal')?.metadata.resourceVersion).toBe('3');
    // A change by someone else arrives; a later answer of this reconcile does not hide it.
    cache.observe('apps/portal', 'MODIFIED', version('4', { generation: 2 }));
    keeper.keep(version('5'));
    expect(cache.get('apps/portal')?.metadata).toMatchObject({ resourceVersion: '4', generation: 2 });
  });

  it('leaves a dropped copy dropped, and drops it when an answer lets the object go or the object is gone', () => {
    const cache = createObjectCache();
    const read = version('1');
    cache.observe('apps/portal', 'ADDED', read);
    const keeper = cache.keeperFor('apps/portal', read, new Set());
    cache.drop('apps/portal');
    keeper.keep(version('2'));
    expect(cache.get('apps/portal')).toBeUndefined();

    cache.observe('apps/portal', 'ADDED', read);
    keeper.keep(version('3', { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: [] }));
    expect(cache.get('apps/portal')).toBeUndefined();

    cache.observe('apps/portal', 'ADDED', read);
    keeper.gone();
    expect(cache.get('apps/portal')).toBeUndefined();
  });
});
