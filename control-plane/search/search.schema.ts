import { z } from 'zod';

export const SOURCE_KINDS = ['document', 'resource'] as const;
export const SourceKindSchema = z.enum(SOURCE_KINDS);
export type SourceKind = z.infer<typeof SourceKindSchema>;

export const SEARCH_MODES = ['fulltext', 'vector', 'hybrid'] as const;
export const SearchModeSchema = z.enum(SEARCH_MODES);
export type SearchMode = z.infer<typeof SearchModeSchema>;

/** The tenant a call acts for: an `Actor` fits, and so does `{tenantId}` in a worker. */
export interface SearchTenant {
  tenantId: string;
}

/** What chunks belong to: a document, or a resource's projection. `type` is its document type or object type. */
export const SourceSchema = z.object({
  kind: SourceKindSchema,
  id: z.string().min(1).max(200),
  type: z.string().max(200),
});
export type Source = z.infer<typeof SourceSchema>;

export const SourceRefSchema = SourceSchema.pick({ kind: true, id: true });
export type SourceRef = z.infer<typeof SourceRefSchema>;

/** One piece of a source's text; `metadata` carries citation positions (`pageNumber`, `sheet`, `row`, `section`). */
export const ChunkSchema = z.object({
  content: z.string(),
  metadata: z.record(z.string(), z.unknown()).default({}),
});
export type ChunkInput = z.input<typeof ChunkSchema>;

export const MAX_SEARCH_LIMIT = 100;

export const SearchQuerySchema = z
  .object({
    query: z.string().trim().min(1, 'is required').max(2000),
    mode: SearchModeSchema.default('hybrid'),
    limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).default(10),
    /** Hits scoring below this (on the 0..1 scale of docs/decisions/0080-search-scores.md) are left out. */
    minScore: z.number().min(0).max(1).optional(),
    kinds: z.array(SourceKindSchema).min(1).max(2).optional(),
    types: z.array(z.string().min(1).max(200)).min(1).max(100).optional(),
    sourceIds: z.array(z.string().min(1).max(200)).min(1).max(1000).optional(),
  })
  .strict();
export type SearchQuery = z.input<typeof SearchQuerySchema>;
export type ParsedSearchQuery = z.output<typeof SearchQuerySchema>;

export const HitSchema = z.object({
  kind: SourceKindSchema,
  sourceId: z.string(),
  sourceType: z.string(),
  chunkIndex: z.number().int(),
  content: z.string(),
  /** 0..1, higher is better. */
  score: z.number().min(0).max(1),
  metadata: z.record(z.string(), z.unknown()),
});
export type Hit = z.infer<typeof HitSchema>;

/** `POST /v4/data/resources/{tenantId}/search`: the tenant's resources by their types' `searchFields` projection. */
export const ResourceSearchInputSchema = z
  .object({
    query: z.string().trim().min(1, 'is required').max(2000),
    /** Object types (key or PascalCase name) to search; all when omitted. */
    types: z.array(z.string().min(1).max(200)).min(1).max(100).optional(),
    mode: SearchModeSchema.default('hybrid'),
    limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).default(10),
  })
  .strict();
export type ResourceSearchInput = z.input<typeof ResourceSearchInputSchema>;

export const ResourceSearchHitSchema = z.object({
  id: z.string(),
  objectType: z.string(),
  /** 0..1, higher is better. */
  score: z.number().min(0).max(1),
  /** The projected values by field path. */
  fields: z.record(z.string(), z.unknown()),
  /** The projection's text, as ranked. */
  content: z.string(),
});

export const ResourceSearchResultSchema = z.object({
  /** The mode that ranked: `hybrid` asked where no vector store is gives `fulltext`. */
  mode: SearchModeSchema,
  data: z.array(ResourceSearchHitSchema),
});
export type ResourceSearchResult = z.infer<typeof ResourceSearchResultSchema>;
