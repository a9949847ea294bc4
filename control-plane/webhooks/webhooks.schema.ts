import { z } from 'zod';
import { UUID } from '../ids.ts';

/** Path segments under `/v4/webhooks/{tenantId}/` that name the management routes, so no source may take them. */
export const RESERVED_SOURCES = ['endpoints', 'deliveries'] as const;

/** The largest body an endpoint takes (the API's own limit); an endpoint may set a smaller one. */
export const MAX_WEBHOOK_BODY_BYTES = 1_048_576;
export const DEFAULT_TOLERANCE_SECONDS = 300;
/** How many refused deliveries an endpoint keeps (the newest): every refusal is counted, only these are stored. */
export const REFUSED_SAMPLE_SIZE = 100;

export const SourceSchema = z
  .string({ error: 'is required' })
  .max(63, 'must be at most 63 characters')
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'must be kebab-case, such as billing-events')
  .refine((source) => !(RESERVED_SOURCES as readonly string[]).includes(source), `must not be ${RESERVED_SOURCES.join(' or ')}`);

const WorkflowIdSchema = z.string({ error: 'is required' }).min(1, 'is required').max(100, 'must be at most 100 characters');
const ToleranceSchema = z.number({ error: 'must be a number of seconds' }).int('must be whole seconds').min(30, 'must be at least 30').max(3600, 'must be at most 3600');
const MaxBodySchema = z
  .number({ error: 'must be a number of bytes' })
  .int('must be whole bytes')
  .min(1024, 'must be at least 1024')
  .max(MAX_WEBHOOK_BODY_BYTES, `must be at most ${MAX_WEBHOOK_BODY_BYTES}`);
const DescriptionSchema = z.string().max(500, 'must be at most 500 characters');

export const CreateEndpointInputSchema = z
  .object({
    source: SourceSchema,
    /** The orchestrate workflow each verified delivery starts, with the delivery's JSON body as its input. */
    workflowId: WorkflowIdSchema,
    description: DescriptionSchema.default(''),
    /** How far a delivery's `X-Webhook-Timestamp` may be from the server's clock. */
    toleranceSeconds: ToleranceSchema.default(DEFAULT_TOLERANCE_SECONDS),
    maxBodyBytes: MaxBodySchema.default(MAX_WEBHOOK_BODY_BYTES),
    enabled: z.boolean({ error: 'must be true or false' }).default(true),
  })
  .strict();
export type CreateEndpointInput = z.infer<typeof CreateEndpointInputSchema>;

export const EndpointRefSchema = z.object({ source: SourceSchema }).strict();

/** What an update may change (any of it, at least one). */
export const EndpointChangesSchema = z
  .object({
    workflowId: WorkflowIdSchema.optional(),
    description: DescriptionSchema.optional(),
    toleranceSeconds: ToleranceSchema.optional(),
    maxBodyBytes: MaxBodySchema.optional(),
    enabled: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .strict();

export const UpdateEndpointInputSchema = EndpointChangesSchema.extend({ source: SourceSchema })
  .strict()
  .refine((input) => Object.keys(input).some((key) => key !== 'source'), { message: 'must change at least one field', path: ['(body)'] });
export type UpdateEndpointInput = z.infer<typeof UpdateEndpointInputSchema>;

export const EndpointSchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  source: z.string(),
  description: z.string(),
  workflowId: z.string(),
  enabled: z.boolean(),
  toleranceSeconds: z.number().int(),
  maxBodyBytes: z.number().int(),
  /** The secret's first characters, to tell which one a sender holds; the secret itself is shown once. */
  secretHint: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  secretRotatedAt: z.string(),
});
export type Endpoint = z.infer<typeof EndpointSchema>;

/** An endpoint as created, or after its secret is rotated: the only answers that hold the secret. */
export const EndpointWithSecretSchema = EndpointSchema.extend({ secret: z.string() });
export type EndpointWithSecret = z.infer<typeof EndpointWithSecretSchema>;

/** A rotation: `revokePrevious` stops the replaced secret at once (a leaked one) instead of after the overlap. */
export const RotateSecretInputSchema = z.object({ source: SourceSchema, revokePrevious: z.boolean().optional() }).strict();

/** A rotation's answer: the new secret, shown this once, and until when the replaced one still works (null: it stopped). */
export const RotatedEndpointSchema = EndpointWithSecretSchema.extend({ previousSecretExpiresAt: z.string().nullable() });
export type RotatedEndpoint = z.infer<typeof RotatedEndpointSchema>;

export const DELIVERY_STATUSES = ['accepted', 'failed', 'rejected'] as const;

/** Why a delivery was refused (`rejected`) or its workflow not started (`failed`). */
export const DELIVERY_REASONS = [
  'endpoint_disabled',
  'capability_refused',
  'payload_too_large',
  'signature_missing',
  'timestamp_missing',
  'timestamp_invalid',
  'signature_invalid',
  'timestamp_stale',
  'invalid_body',
  'replayed',
  'workflow_unavailable',
] as const;
export type DeliveryReason = (typeof DELIVERY_REASONS)[number];

export const DeliverySchema = z.object({
  id: z.string(),
  endpointId: z.string(),
  source: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  reason: z.enum(DELIVERY_REASONS).nullable(),
  message: z.string().nullable(),
  /** The sender's own id of the delivery (`X-Webhook-Id`). */
  externalId: z.string().nullable(),
  signedAt: z.string().nullable(),
  /** The body's size in bytes (for a body refused as too large: its declared size, or what was read of it). */
  sizeBytes: z.number().int(),
  contentType: z.string().nullable(),
  userAgent: z.string().nullable(),
  executionId: z.string().nullable(),
  /** The delivery this one replays, for a replay by an administrator. */
  replayOf: z.string().nullable(),
  replayedBy: z.string().nullable(),
  receivedAt: z.string(),
});
export type Delivery = z.infer<typeof DeliverySchema>;

export const DeliveryDetailSchema = DeliverySchema.extend({
  /** The verified JSON body (none for a refused delivery). */
  payload: z.record(z.string(), z.unknown()).nullable(),
});
export type DeliveryDetail = z.infer<typeof DeliveryDetailSchema>;

/** A whole number from a query string (`limit=20`) or JSON. */
const wholeNumber = (min: number, max: number, fallback: number) =>
  z
    .preprocess(
      (v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v),
      z.number({ error: 'must be a whole number' }).int('must be a whole number').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`),
    )
    .default(fallback);

export const ListDeliveriesInputSchema = z
  .object({
    source: SourceSchema,
    status: z.enum(DELIVERY_STATUSES, { error: `must be one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
    limit: wholeNumber(1, 100, 20),
    offset: wholeNumber(0, 100_000, 0),
  })
  .strict();
export type ListDeliveriesInput = z.infer<typeof ListDeliveriesInputSchema>;

export const DeliveryPageSchema = z.object({ data: z.array(DeliverySchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() });
export type DeliveryPage = z.infer<typeof DeliveryPageSchema>;

export const ListRefusalsInputSchema = z
  .object({ source: SourceSchema, limit: wholeNumber(1, 100, 24), offset: wholeNumber(0, 100_000, 0) })
  .strict();
export type ListRefusalsInput = z.infer<typeof ListRefusalsInputSchema>;

/** Refused deliveries of one window (an hour), by reason. */
export const RefusalWindowSchema = z.object({
  windowStart: z.string(),
  windowSeconds: z.number().int(),
  refused: z.number().int(),
  reasons: z.partialRecord(z.enum(DELIVERY_REASONS), z.number().int()),
});
export type RefusalWindow = z.infer<typeof RefusalWindowSchema>;

/** A page of refusal windows, newest first; `total` windows, and `refused` deliveries over all of them (the retention, 30 days). */
export const RefusalPageSchema = z.object({
  data: z.array(RefusalWindowSchema),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  refused: z.number().int(),
});
export type RefusalPage = z.infer<typeof RefusalPageSchema>;

export const DeliveryRefSchema = z.object({ deliveryId: z.string().regex(UUID, 'must be a delivery id') }).strict();

/** What the edge says of an inbound delivery besides its body: the path's tenant and source, and the request's headers. */
export const ReceiveMetaSchema = z
  .object({
    tenantId: z.string().min(1).max(200),
    source: z.string().min(1).max(200),
    timestamp: z.string().max(100).optional(),
    signature: z.string().max(1000).optional(),
    deliveryId: z.string().max(200).optional(),
    contentType: z.string().max(255).optional(),
    contentLength: z.string().max(30).optional(),
    userAgent: z
      .string()
      .optional()
      .transform((agent) => agent?.slice(0, 300)),
  })
  .strict();
export type ReceiveMeta = z.infer<typeof ReceiveMetaSchema>;

/** The endpoint a delivery's path names, as the edge asks for it to pick the budget the delivery spends. */
export const BudgetKeyInputSchema = ReceiveMetaSchema.pick({ tenantId: true, source: true }).strict();
export type BudgetKeyInput = z.infer<typeof BudgetKeyInputSchema>;
/** `key` names the endpoint whatever the spelling of its path (the tenant's id and the source); null when the path names none. */
export const BudgetKeySchema = z.object({ key: z.string().nullable() });

export const ReceivedSchema = z.object({
  deliveryId: z.string(),
  status: z.enum(['accepted', 'failed']),
  executionId: z.string().nullable(),
});
export type Received = z.infer<typeof ReceivedSchema>;
