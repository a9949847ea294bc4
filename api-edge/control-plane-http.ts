import { createTRPCUntypedClient, httpLink } from '@trpc/client';
import type { CallContext, ControlPlane } from '../control-plane/contracts.ts';

/** The control plane over tRPC's HTTP link: the caller's token and tenant travel as headers. */
export function createHttpControlPlane(url: string): ControlPlane {
  const client = createTRPCUntypedClient({
    links: [
      httpLink({
        url,
        headers: ({ op }) => {
          const call = op.context as unknown as CallContext;
          const headers: Record<string, string> = {};
          if (call.token) headers.authorization = `Bearer ${call.token}`;
          if (call.tenantHint) headers['x-tenant-id'] = call.tenantHint;
          return headers;
        },
      }),
    ],
  });
  const context = (call: CallContext) => ({ context: call as unknown as Record<string, unknown> });
  return {
    query: (call, domain, procedure, input) => client.query(`${domain}.${procedure}`, input, context(call)),
    mutation: (call, domain, procedure, input) => client.mutation(`${domain}.${procedure}`, input, context(call)),
  } as ControlPlane;
}
