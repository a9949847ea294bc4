import { createTRPCUntypedClient, httpLink } from '@trpc/client';
import { unstorableInputError, type CallContext, type ControlPlane } from '../control-plane/contracts.ts';

/**
 * The control plane over tRPC's HTTP link: the caller's token and tenant travel as headers (the
 * tenant percent-encoded: it comes from a path or header of the request and may hold any text).
 * Queries are sent as POST too, so that a query's input (a long filter list) is not limited by the
 * length of a URL.
 */
export function createHttpControlPlane(url: string): ControlPlane {
  const client = createTRPCUntypedClient({
    links: [
      httpLink({
        url,
        methodOverride: 'POST',
        headers: ({ op }) => {
          const call = op.context as unknown as CallContext;
          const headers: Record<string, string> = {};
          if (call.token) headers.authorization = `Bearer ${call.token}`;
          if (call.tenantHint) headers['x-tenant-id'] = encodeURIComponent(call.tenantHint);
          return headers;
        },
      }),
    ],
  });
  const context = (call: CallContext) => ({ context: call as unknown as Record<string, unknown> });
  // The control plane refuses such input too; here it is refused before JSON.stringify would fail
  // on a document too deep to serialise, with the same 400 the control plane gives in-process.
  const send = (input: unknown) => {
    const error = unstorableInputError(input);
    if (error) throw error;
    return input;
  };
  return {
    query: async (call, domain, procedure, input) => client.query(`${domain}.${procedure}`, send(input), context(call)),
    mutation: async (call, domain, procedure, input) => client.mutation(`${domain}.${procedure}`, send(input), context(call)),
  } as ControlPlane;
}
