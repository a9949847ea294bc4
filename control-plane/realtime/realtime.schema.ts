import { z } from 'zod';
import { UUID } from '../ids.ts';

/**
 * What a connection receives: `resources` (every resource change of the tenant),
 * `resources:<type>` (changes of one object type), `resources:<type>:<id>` (of one resource).
 */
export const CHANNEL = /^resources(:[^:\s]{1,200}(:[0-9a-fA-F-]{36})?)?$/;

export const ChannelSchema = z
  .string()
  .max(300, 'must be at most 300 characters')
  .regex(CHANNEL, 'must be resources, resources:<type> or resources:<type>:<id>')
  .refine((channel) => channel.split(':').length < 3 || UUID.test(channel.split(':')[2]!), 'must name a resource by its id');

export const NegotiateInputSchema = z
  .object({
    channels: z
      .array(ChannelSchema, { error: 'is required' })
      .min(1, 'must name at least one channel')
      .max(20, 'must name at most 20 channels')
      .transform((channels) => [...new Set(channels)]),
  })
  .strict();
export type NegotiateInput = z.infer<typeof NegotiateInputSchema>;

export const NegotiationSchema = z.object({
  tenantId: z.string(),
  channels: z.array(z.string()),
  /** Signed, for this tenant and these channels; opens one connection, until `expiresAt`. */
  token: z.string(),
  expiresAt: z.string(),
});
export type Negotiation = z.infer<typeof NegotiationSchema>;

/** An event id as a connection names it (`Last-Event-ID`): the event's number in the tenant's log. */
export const EventIdSchema = z.string().regex(/^(0|[1-9]\d{0,15})$/, 'must be an event id (a whole number) from this stream');

export const StreamInputSchema = z
  .object({
    token: z.string({ error: 'is required' }).min(1, 'is required').max(8192, 'is not a realtime token'),
    lastEventId: EventIdSchema.optional(),
  })
  .strict();
export type StreamInput = z.infer<typeof StreamInputSchema>;

export const EVENT_KINDS = ['created', 'updated', 'deleted', 'action'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** One change of a resource: which, and its version after it (a delete: the version it would have had). No data. */
export const RealtimeEventSchema = z.object({
  eventId: z.string(),
  event: z.enum(EVENT_KINDS),
  type: z.string(),
  id: z.string(),
  version: z.number().int(),
  /** The action's name, for `action` events. */
  action: z.string().optional(),
  at: z.string(),
});
export type RealtimeEvent = z.infer<typeof RealtimeEventSchema>;

/** What a connection yields, in order: `ready` first, then events, resets and heartbeats; `revoked` or `expired` ends it. */
export type StreamMessage =
  /** `lastEventId`: the newest event before the connection's first, which a client resumes after if it gets none. */
  | { type: 'ready'; connectionId: string; tenantId: string; channels: string[]; lastEventId: string; resumed: boolean; expiresAt: string }
  | { type: 'event'; event: RealtimeEvent }
  /** Events after `after` up to `resumedAt` were no longer in the log: the client should reload what it shows. */
  | { type: 'reset'; after: string; resumedAt: string; dropped: number }
  | { type: 'heartbeat' }
  /** The user lost the membership or permission the connection was opened with; it ends. */
  | { type: 'revoked'; reason: string }
  | { type: 'expired'; reason: string };

export const AlertsInputSchema = z.object({}).strict();

export const AlertSchema = z.object({
  code: z.enum(['DELIVERY_LAG', 'EVENTS_DROPPED', 'LISTENER_DOWN']),
  severity: z.enum(['warning', 'critical']),
  message: z.string(),
});

export const AlertsSchema = z.object({
  tenantId: z.string(),
  /** Whether the tenant's changes are recorded (since its first negotiation). */
  recording: z.boolean(),
  /** The newest event's id, and the oldest the log still holds (null: none). */
  lastEventId: z.string().nullable(),
  oldestEventId: z.string().nullable(),
  retention: z.number().int(),
  connections: z.number().int(),
  /** Control-plane instances holding connections of the tenant. */
  instances: z.number().int(),
  lag: z.object({
    /** Events recorded that some instance has not read yet, plus those waiting to be written to connections. */
    events: z.number().int(),
    /** Longest time from an event's commit to an instance reading it, in the last report of each instance. */
    ms: z.number().int(),
    /** Connections reading the log on their own, behind the others (resumed, or too slow to keep up). */
    catchingUp: z.number().int(),
  }),
  dropped: z.object({ events: z.number().int(), lastAt: z.string().nullable() }),
  alerts: z.array(AlertSchema),
  at: z.string(),
});
export type Alerts = z.infer<typeof AlertsSchema>;

export const RotateSigningKeysInputSchema = z
  .object({
    /** Stop verifying tokens of every earlier key at once (a key that may have leaked), instead of after the overlap. */
    retirePrevious: z.boolean().optional(),
  })
  .strict();
export type RotateSigningKeysInput = z.infer<typeof RotateSigningKeysInputSchema>;

export const RotatedSigningKeysSchema = z.object({
  /** The new signing key's id, as tokens name it in their `kid` header. */
  kid: z.string(),
  createdAt: z.string(),
  /** Earlier keys that still verify tokens, until `retiresAt`. */
  verifying: z.array(z.object({ kid: z.string(), retiresAt: z.string() })),
});
export type RotatedSigningKeys = z.infer<typeof RotatedSigningKeysSchema>;
