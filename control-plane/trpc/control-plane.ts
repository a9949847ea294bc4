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

/**
 * How the edge reaches the control plane: in-process through a tRPC caller, or over tRPC's HTTP
 * link when the control plane runs apart. Reads are queries, writes are mutations.
 */
export interface ControlPlane {
  query<D extends Domain, P extends ProcedureName<D>>(call: CallContext, domain: D, procedure: P, input: Inputs[D][P]): Promise<Outputs[D][P]>;
  mutation<D extends Domain, P extends ProcedureName<D>>(call: CallContext, domain: D, procedure: P, input: Inputs[D][P]): Promise<Outputs[D][P]>;
}
