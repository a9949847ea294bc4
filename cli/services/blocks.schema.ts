import { z } from 'zod';
import { COUPLINGS, LANES, PACKAGE_PROFILES, READINESS } from './blocks.constants.ts';

/**
 * A block: one building block of the platform an app is made of (resources, documents, chat,
 * workflows, realtime, ...), described by its manifest. The client ships a catalog of them
 * (`cli/blocks/catalog.json`); a project may describe blocks of its own in `svc.blocks.json`.
 * Both files are a {@link BlockCatalogSchema}.
 */

const KEBAB = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const ROUTE = /^(GET|POST|PUT|PATCH|DELETE) \/\S*$/;

const list = (item: z.ZodString, description: string) => z.array(item).describe(description).optional();

export const BlockProvidesSchema = z
  .object({
    routes: list(z.string().regex(ROUTE, 'must be "METHOD /path"'), 'HTTP routes it serves, "METHOD /path" with {parameters} (v4 and v3 of the platform)'),
    capabilities: list(z.string().min(1), 'capability keys of the platform a tenant needs for it (its plan includes them, or an administrator allows them)'),
    objectTypes: list(z.string().regex(KEBAB, 'must be kebab-case'), 'object types it defines (keys)'),
    workflows: list(z.string().min(1), 'durable workflows it runs'),
    commands: list(z.string().min(1), 'svc commands that use it'),
    env: list(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a variable name'), 'environment variables that configure it'),
  })
  .strict()
  .describe('What the block provides to an app');

export const BlockManifestSchema = z
  .object({
    id: z.string().regex(KEBAB, 'must be kebab-case').describe('Unique id, kebab-case'),
    name: z.string().min(1).describe('Display name'),
    description: z.string().min(1).describe('What it does, in a sentence or two'),
    lane: z.enum(LANES).describe('foundation: what every app stands on; product: features an app offers its users; addon: optional extensions; dev: tooling for developers'),
    coupling: z
      .enum(COUPLINGS)
      .describe('external-safe: an app outside the company may use it as it is; external-with-adapter: through an adapter (named in `adapter`); internal-only: inside the company or the platform only'),
    readiness: z.enum(READINESS).describe('public-ready: supported for every app; preview: works, may change; internal: for the company\'s own apps; blocked: not usable yet (`blockedReason` says why)'),
    package: z.string().min(1).describe('The code package that implements it: a folder of the platform\'s repository, or a package name'),
    packageProfiles: z.array(z.enum(PACKAGE_PROFILES)).min(1).describe('The package profiles (svc init --package-profile) an app may include it in'),
    provides: BlockProvidesSchema,
    requires: z.array(z.string().regex(KEBAB, 'must be kebab-case')).describe('Ids of the blocks it needs').optional(),
    adapter: z.string().min(1).describe('For external-with-adapter: the adapter an external app needs').optional(),
    blockedReason: z.string().min(1).describe('For blocked: why, and what would unblock it').optional(),
    docs: z.string().min(1).describe('Where its documentation is').optional(),
  })
  .strict()
  .describe('The manifest of one block');

export const BlockCatalogSchema = z
  .object({
    $schema: z.string().optional(),
    catalogVersion: z.literal(1).describe('The format of this file: 1'),
    blocks: z.array(BlockManifestSchema).describe('The blocks, each with a unique id'),
  })
  .strict()
  .describe('A block catalog: the client\'s own (cli/blocks/catalog.json), or a project\'s (svc.blocks.json)');

export type BlockProvides = z.infer<typeof BlockProvidesSchema>;
export type BlockManifest = z.infer<typeof BlockManifestSchema>;
export type BlockCatalog = z.infer<typeof BlockCatalogSchema>;

/** The JSON Schema (draft 2020-12) of a block catalog file, what `svc blocks schema` prints. */
export function blockCatalogJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(BlockCatalogSchema, { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown>;
  return { $schema: schema['$schema'], title: 'svc block catalog', ...schema };
}
