import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { Identity } from '../identity/identity.schema.ts';
import type { AppRouter } from './root-router.ts';

type Inputs = inferRouterInputs<AppRouter>;
type Outputs = inferRouterOutputs<AppRouter>;
export type Domain = keyof Inputs & keyof Outputs;
export type ProcedureName<D extends Domain> = keyof Inputs[D] & keyof Outputs[D] & string;

/** Who a call is made for: the verified identity, its raw token (forwarded over HTTP), the tenant named by the request. */
export interface CallContext {
  identity: Identity | null;
  token?: string;
  tenantHint?: string;
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
 */
export interface ControlPlane {
  query<D extends Domain, P extends ProcedureName<D>>(call: CallContext, domain: D, procedure: P, input: PortInput<Inputs[D][P]>): Promise<Outputs[D][P]>;
  mutation<D extends Domain, P extends ProcedureName<D>>(call: CallContext, domain: D, procedure: P, input: PortInput<Inputs[D][P]>): Promise<Outputs[D][P]>;
}
