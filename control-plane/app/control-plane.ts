import type { Readable } from 'node:stream';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { Identity } from '../identity/identity.schema.ts';
import type { AppRouter } from './root-router.ts';
import type { UploadMeta } from '../trpc/upload-body.ts';

type Inputs = inferRouterInputs<AppRouter>;
type Outputs = inferRouterOutputs<AppRouter>;
export type Domain = keyof Inputs;
export type ProcedureName<D extends Domain> = keyof Inputs[D] & keyof Outputs[D] & string;

/** Procedures of a domain written as async generators: their output is what they yield. */
export type SubscriptionName<D extends Domain> = {
  [P in ProcedureName<D>]: Outputs[D][P] extends AsyncIterable<unknown> ? P : never;
}[ProcedureName<D>];
/** One value a subscription yields. */
export type Yielded<D extends Domain, P extends ProcedureName<D>> = Outputs[D][P] extends AsyncIterable<infer V> ? V : never;

/** Procedures of a domain that take a streamed body (their input is `octetInputParser`'s). */
export type UploadName<D extends Domain> = {
  [P in ProcedureName<D>]: Inputs[D][P] extends Blob | Uint8Array ? (Blob extends Inputs[D][P] ? P : never) : never;
}[ProcedureName<D>];

/**
 * A streamed body with what describes it. The bytes are read once, as the procedure consumes them,
 * and never buffered whole; a refused body is left where it stopped, never cancelled (the caller
 * owns its source, an HTTP request say, and decides whether to drain it).
 */
export interface UploadBody {
  stream: ReadableStream<Uint8Array> | Readable;
  /** The file's name and type, and whatever else the procedure takes to describe it (checked there). */
  meta: (UploadMeta & Record<string, unknown>) | Untrusted;
}

/** Who a call is made for: the verified identity, its raw token (forwarded over HTTP), the tenant named by the request. */
export interface CallContext {
  identity: Identity | null;
  token?: string;
  tenantHint?: string;
  /** The edge's request id (`X-Request-Id`) and the request's W3C `traceparent`. */
  requestId?: string;
  traceparent?: string;
}

declare const UNTRUSTED: unique symbol;

/** A value the edge passes on as the request carried it: the procedure's input schema checks it. */
export type Untrusted = { readonly [UNTRUSTED]: true };

/** Marks a request's value (a body, a query parameter) as passed on unchecked. */
export const untrusted = <T>(value: T) => value as T & Untrusted;

/**
 * A procedure's input as the edge may send it: the typed input, any part of which may be an
 * untrusted value from the request. Names the edge sets itself stay checked by the compiler.
 */
export type PortInput<T> = T | Untrusted | (T extends readonly unknown[] ? never : T extends object ? { [K in keyof T]: PortInput<T[K]> } : never);

/**
 * How the edge reaches the control plane: in-process through a tRPC caller, or over tRPC's HTTP
 * link when the control plane runs apart. Reads are queries, writes are mutations.
 *
 * A subscription yields the procedure's values as they come; an error before the first value
 * (authentication, permission, input) is thrown by the first `next()`, as the same error a query
 * would throw. Leaving the loop or aborting `signal` ends the procedure's generator (its `finally`
 * runs) on either transport. An upload passes a streamed body to a procedure, with `meta`.
 */
export interface ControlPlane {
  query<D extends Domain, P extends ProcedureName<D>>(call: CallContext, domain: D, procedure: P, input: PortInput<Inputs[D][P]>): Promise<Outputs[D][P]>;
  mutation<D extends Domain, P extends ProcedureName<D>>(call: CallContext, domain: D, procedure: P, input: PortInput<Inputs[D][P]>): Promise<Outputs[D][P]>;
  subscription<D extends Domain, P extends SubscriptionName<D>>(
    call: CallContext,
    domain: D,
    procedure: P,
    input: PortInput<Inputs[D][P]>,
    options?: { signal?: AbortSignal },
  ): AsyncIterable<Yielded<D, P>>;
  upload<D extends Domain, P extends UploadName<D>>(call: CallContext, domain: D, procedure: P, body: UploadBody): Promise<Outputs[D][P]>;
}
