import type { Server } from 'node:http';
import { createHTTPServer } from '@trpc/server/adapters/standalone';
import type { Health } from './health/health.schema.ts';
import type { Identity } from './identity/identity.schema.ts';
import type { Context, Services } from './trpc/context.ts';
import { appRouter } from './trpc/root-router.ts';

const BEARER = /^Bearer\s+(\S+)$/i;

/** The tenant the edge names, percent-encoded (a value that does not decode names no tenant anyone belongs to). */
function decodeTenantHint(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * The control plane as its own process, reached over tRPC's HTTP link. It verifies the forwarded
 * bearer token itself, so a caller cannot claim an identity it does not hold.
 */
export function createControlPlaneServer(deps: { services: Services; verifyToken: (token: string) => Promise<Identity> }): Server {
  return createHTTPServer({
    router: appRouter,
    // The edge sends queries as POST (api-edge/control-plane-http.ts).
    allowMethodOverride: true,
    // Probes read the status code: a control plane whose database does not answer is not ready.
    responseMeta: ({ paths, data }) => {
      const health = paths?.length === 1 && paths[0] === 'health.check' ? (data[0] as { result?: { data?: Health } } | undefined)?.result?.data : undefined;
      return health?.status === 'unavailable' ? { status: 503 } : {};
    },
    createContext: async ({ req }): Promise<Context> => {
      const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
      const identity = token ? await deps.verifyToken(token).catch(() => null) : null;
      const tenantHint = req.headers['x-tenant-id'];
      return { services: deps.services, identity, tenantHint: typeof tenantHint === 'string' ? decodeTenantHint(tenantHint) : undefined };
    },
  });
}
