import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  context,
  createContextKey,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
  type Context,
  type ContextManager,
  type SpanContext,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
} from '@opentelemetry/api';

/**
 * Request ids and W3C trace context (`traceparent`) through the OpenTelemetry API. Only the API
 * package is installed: this module supplies the two pieces an SDK would (a context manager on
 * AsyncLocalStorage, and the W3C TraceContext propagator), so that a procedure's work, and the
 * workflows it starts, see the trace of the request that caused them. No spans are recorded or
 * exported (docs/decisions/0111-request-ids-and-trace-context.md).
 */

export const TRACEPARENT_HEADER = 'traceparent';
export const REQUEST_ID_HEADER = 'x-request-id';

const REQUEST_ID = createContextKey('svc.request_id');
const MAX_REQUEST_ID_LENGTH = 128;
/** Printable ASCII: what a request id may hold. */
const PRINTABLE = /^[\x20-\x7e]+$/;

/** The request id a client sent, when it is printable ASCII of at most 128 characters; a new UUID otherwise. */
export function requestIdFrom(header: string | null | undefined): string {
  return header && header.length <= MAX_REQUEST_ID_LENGTH && PRINTABLE.test(header) ? header : randomUUID();
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * A `traceparent` header's span context (W3C Trace Context, level 1): `undefined` when it is
 * malformed, uses the forbidden version ff, has an all-zero trace or parent id, or is version 00
 * with anything after the flags. A later version's extra fields are ignored, as the spec asks.
 */
export function parseTraceparent(value: string | null | undefined): SpanContext | undefined {
  const match = value ? TRACEPARENT.exec(value.trim()) : null;
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  const spanContext: SpanContext = { traceId: traceId!, spanId: spanId!, traceFlags: parseInt(flags!, 16) & TraceFlags.SAMPLED, isRemote: true };
  return isSpanContextValid(spanContext) ? spanContext : undefined;
}

/** The `traceparent` header (version 00) of a span context. */
export function formatTraceparent(spanContext: SpanContext): string {
  return `00-${spanContext.traceId}-${spanContext.spanId}-${(spanContext.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A `traceparent` starting a new trace, not sampled: for requests that arrive without one. */
export function newTraceparent(): string {
  const ids = randomBytes(24).toString('hex');
  return formatTraceparent({ traceId: ids.slice(0, 32), spanId: ids.slice(32), traceFlags: TraceFlags.NONE });
}

/** The W3C TraceContext propagator (`traceparent` only; `tracestate` is not carried). */
export class W3CTraceContextPropagator implements TextMapPropagator {
  inject(ctx: Context, carrier: unknown, setter: TextMapSetter): void {
    const spanContext = trace.getSpanContext(ctx);
    if (spanContext && isSpanContextValid(spanContext)) setter.set(carrier, TRACEPARENT_HEADER, formatTraceparent(spanContext));
  }

  extract(ctx: Context, carrier: unknown, getter: TextMapGetter): Context {
    const raw = getter.get(carrier, TRACEPARENT_HEADER);
    const spanContext = parseTraceparent(Array.isArray(raw) ? raw[0] : raw);
    return spanContext ? trace.setSpanContext(ctx, spanContext) : ctx;
  }

  fields(): string[] {
    return [TRACEPARENT_HEADER];
  }
}

/** What a request's trace is carried as: an OpenTelemetry context, or the fields it is made of when first asked for. */
interface CarriedContext {
  ctx?: Context;
  fields?: TraceFields;
}

/** The OpenTelemetry context of a request's trace fields. */
function contextOf(fields: TraceFields): Context {
  const ctx = propagation.extract(ROOT_CONTEXT, { [TRACEPARENT_HEADER]: fields.traceparent });
  return fields.requestId ? ctx.setValue(REQUEST_ID, fields.requestId) : ctx;
}

/**
 * OpenTelemetry's context carried across awaits by AsyncLocalStorage (as its context-async-hooks
 * package does). A request's trace is stored as its fields and made into a context only when
 * something reads it (a workflow start, say): most calls never do.
 */
class AsyncLocalStorageContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<CarriedContext>();

  active(): Context {
    const carried = this.storage.getStore();
    if (!carried) return ROOT_CONTEXT;
    return (carried.ctx ??= contextOf(carried.fields ?? {}));
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run({ ctx }, () => fn.apply(thisArg, args));
  }

  withFields<T>(fields: TraceFields, fn: () => T): T {
    return this.storage.run({ fields }, fn);
  }

  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const run = (self: unknown, args: unknown[]) => this.with(ctx, () => (target as (...a: unknown[]) => unknown).apply(self, args));
    return function (this: unknown, ...args: unknown[]) {
      return run(this, args);
    } as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}

/** This module's context manager, when the OpenTelemetry API took it (another one registered first keeps its place). */
let manager: AsyncLocalStorageContextManager | undefined;
let installed = false;

/** Registers the context manager and the W3C propagator with the OpenTelemetry API, once per process. */
export function installTraceContext(): void {
  if (installed) return;
  installed = true;
  const ours = new AsyncLocalStorageContextManager();
  if (context.setGlobalContextManager(ours)) manager = ours;
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

/** What a call carries for tracing: the request's id and its `traceparent`. */
export interface TraceFields {
  requestId?: string;
  traceparent?: string;
}

/** Runs `fn` with the request id and trace of `fields` as the active OpenTelemetry context. */
export function withTrace<T>(fields: TraceFields, fn: () => T): T {
  installTraceContext();
  return manager ? manager.withFields(fields, fn) : context.with(contextOf(fields), fn);
}

/** The request id and `traceparent` of the active context (set by {@link withTrace}); empty outside one. */
export function activeTrace(): TraceFields {
  const ctx = context.active();
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  const requestId = ctx.getValue(REQUEST_ID) as string | undefined;
  return { ...(requestId ? { requestId } : {}), ...(carrier[TRACEPARENT_HEADER] ? { traceparent: carrier[TRACEPARENT_HEADER] } : {}) };
}

/** The trace id of a `traceparent`, for logs. */
export const traceIdOf = (traceparent: string | undefined) => (traceparent ? parseTraceparent(traceparent)?.traceId : undefined);
