import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { toNodeHandler } from 'srvx/node';
import type { createEdgeApp } from './app.ts';

/** Requests that the identity provider answers instead of the REST app (its own Node handler). */
export interface NodeMount {
  handles(pathname: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse): void;
}

/** One Node HTTP server for the edge: the identity provider's paths go to it, the rest to Elysia. */
export function createEdgeServer(app: ReturnType<typeof createEdgeApp>, mounts: NodeMount[] = []): Server {
  app.compile();
  const handleRest = toNodeHandler(app.fetch as Parameters<typeof toNodeHandler>[0]);
  return createServer((req, res) => {
    const pathname = (req.url ?? '/').split('?')[0]!;
    const mount = mounts.find((m) => m.handles(pathname));
    if (mount) mount.handle(req, res);
    else void handleRest(req as never, res as never);
  });
}
