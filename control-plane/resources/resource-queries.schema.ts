import { z } from 'zod';
import { limitDefaulting } from '../query/paging.ts';
import { ResourceSchema, ResourceTypeNameSchema, TotalExactSchema } from './resources.schema.ts';

/** A list sent as a JSON array, or as one comma-separated string (`"invoice,bill"`), as the CLI's `--types` and `--group-by` give it. */
const listOf = <T extends z.ZodType>(item: T, max: number, issue: string) =>
  z.preprocess((value) => (typeof value === 'string' ? value.split(',').map((part) => part.trim()) : value), z.array(item).min(1, issue).max(max, issue));

const WhereSchema = z.record(z.string(), z.unknown());
const CursorSchema = z.string().min(1).max(4096);

/** A query across types: 1 to 20 type keys or names, newest first. */
export const QueryResourcesInputSchema = z
  .object({
    types: listOf(ResourceTypeNameSchema, 20, 'must name 1 to 20 types'),
    where: WhereSchema.optional(),
    limit: limitDefaulting(20),
    cursor: CursorSchema.optional(),
  })
  .strict();
export type QueryResourcesInput = z.infer<typeof QueryResourcesInputSchema>;

export const ResourceQueryPageSchema = z.object({
  items: z.array(ResourceSchema),
  total: z.number().int(),
  totalExact: TotalExactSchema,
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
});
export type ResourceQueryPage = z.infer<typeof ResourceQueryPageSchema>;

const wholeNumber = (value: unknown) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value);

/** An aggregate of one type's resources: group keys, metrics by alias, a where filter and a limit on the groups. */
export const AggregateResourcesInputSchema = z
  .object({
    type: ResourceTypeNameSchema,
    groupBy: listOf(z.string().min(1, 'must name a field').max(600), 5, 'must list 1 to 5 fields'),
    /** `{"<alias>": {"<op>": "<field>"}}`; checked, with errors naming `metrics.<alias>`, by the aggregate compiler. */
    metrics: z.record(z.string(), z.unknown()),
    where: WhereSchema.optional(),
    limit: z
      .preprocess(wholeNumber, z.number({ error: 'must be a whole number' }).int('must be a whole number').min(1, 'must be between 1 and 10000').max(10_000, 'must be between 1 and 10000'))
      .default(1000),
  })
  .strict();
export type AggregateResourcesInput = z.infer<typeof AggregateResourcesInputSchema>;

export const AggregateResultSchema = z.object({
  /** One row per group: the group keys as the request named them, and each metric by its alias. */
  items: z.array(z.record(z.string(), z.unknown())),
  /** More groups matched than `limit`. */
  hasMore: z.boolean(),
});
export type AggregateResult = z.infer<typeof AggregateResultSchema>;
