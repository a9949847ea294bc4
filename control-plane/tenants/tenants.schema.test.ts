import { describe, expect, it } from 'vitest';
import { platformPermissionsOf } from '../auth/permissions.ts';
import { CreateChildTenantInputSchema, CreateRootTenantInputSchema } from './tenants.schema.ts';

const issue = (result: { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } }) => {
  const first = result.error?.issues[0];
  return first && [first.path.join('.'), first.message];
};

describe('tenant input schemas', () => {
  it('applies the contract’s defaults and normalises domains', () => {
    expect(CreateRootTenantInputSchema.parse({ name: ' Acme ', slug: 'acme-2', homeRegion: 'eu', domains: ['Acme.Example', 'acme.example'] })).toEqual({
      name: 'Acme',
      slug: 'acme-2',
      homeRegion: 'eu',
      domains: ['acme.example'],
      usecase: 'generic',
      starterTemplate: 'blank-vertical-template',
    });
  });

  it('requires the home region of a root tenant only', () => {
    expect(issue(CreateRootTenantInputSchema.safeParse({ name: 'A', slug: 'a' }))).toEqual(['homeRegion', 'is required']);
    expect(CreateChildTenantInputSchema.parse({ name: 'A', slug: 'a' }).homeRegion).toBeUndefined();
  });

  it('names the allowed values of each enum', () => {
    expect(issue(CreateRootTenantInputSchema.safeParse({ name: 'A', slug: 'a', homeRegion: 'us' }))).toEqual(['homeRegion', 'must be one of au, ca, eu']);
    expect(issue(CreateRootTenantInputSchema.safeParse({ name: 'A', slug: 'a', homeRegion: 'au', usecase: 'x' }))).toEqual([
      'usecase',
      'must be one of council, retail, healthcare, finance, manufacturing, generic',
    ]);
  });

  it('accepts kebab-case slugs only', () => {
    for (const slug of ['a', 'acme', 'acme-2', '2-acme-co']) expect(CreateChildTenantInputSchema.safeParse({ name: 'A', slug }).success).toBe(true);
    expect(issue(CreateChildTenantInputSchema.safeParse({ name: 'A', slug: '0b7e2c4a-1f3d-4e5a-9b8c-7d6e5f4a3b2c' }))).toEqual(['slug', 'must not have the form of a tenant id (a UUID)']);
    for (const slug of ['Acme', 'acme_co', 'acme--co', '-acme', 'acme-', 'ac me', '', 'a'.repeat(64)]) {
      expect(CreateChildTenantInputSchema.safeParse({ name: 'A', slug }).success, slug).toBe(false);
    }
  });
});

describe('platform permissions', () => {
  it('come only from known platform roles', () => {
    expect([...platformPermissionsOf(['platform-admin'])]).toContain('platform.tenants.create-root');
    expect(platformPermissionsOf(['tenant-admin', 'admin']).size).toBe(0);
  });
});
