/**
 * The vocabularies of a project's manifest, apart from the service so that the commands can offer them in their options
 * without loading the service when the client starts.
 */

export const PACKAGE_PROFILES = ['external', 'internal', 'hybrid'] as const;
export type PackageProfile = (typeof PACKAGE_PROFILES)[number];
/** The `--from` value recorded for the template that ships with the client. */
export const BUILTIN_SOURCE = 'builtin:app';
