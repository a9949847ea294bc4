/**
 * The vocabularies of a block's manifest (see blocks.schema.ts), apart from its zod schema so
 * that the commands can offer them as choices without loading zod when the client starts.
 */

export const LANES = ['foundation', 'product', 'addon', 'dev'] as const;
export const COUPLINGS = ['external-safe', 'external-with-adapter', 'internal-only'] as const;
export const READINESS = ['public-ready', 'preview', 'internal', 'blocked'] as const;
export const PACKAGE_PROFILES = ['external', 'internal', 'hybrid'] as const;
export const GROUPS = ['lane', 'package', 'coupling', 'profile', 'readiness'] as const;

export type Lane = (typeof LANES)[number];
export type Coupling = (typeof COUPLINGS)[number];
export type Readiness = (typeof READINESS)[number];
export type PackageProfile = (typeof PACKAGE_PROFILES)[number];
export type GroupBy = (typeof GROUPS)[number];
