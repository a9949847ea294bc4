import { describe, expect, it } from 'vitest';
import { snakeCaseFields } from './wire-fields.ts';

describe('snakeCaseFields', () => {
  it('writes each top-level field in snake_case, leaves values and undefined fields alone', () => {
    expect(snakeCaseFields({ appKey: 'shop', redirectUris: ['https://a/cb'], childTenant: { name: 'Shop' }, dryRun: false, name: 'x', gone: undefined })).toEqual({
      app_key: 'shop',
      redirect_uris: ['https://a/cb'],
      child_tenant: { name: 'Shop' },
      dry_run: false,
      name: 'x',
    });
  });
});
