import { AsyncLocalStorage } from 'node:async_hooks';
import type { Server, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServiceUnavailableError } from '../control-plane/contracts.ts';

/**
 * Drained shutdowns (docs/behaviour.md, "Drained shutdowns"): on SIGTERM a server stops accepting
 * connections, ends its event streams with a final event the client resumes from (`Last-Event-ID`)
 * elsewhere, lets the requests in flight finish within a grace period, then closes what is left.
 */

/** How long requests in flight may take to finish after SIGTERM (`SHUTDOWN_GRACE_SECONDS`). */
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 25;

/** What a stream sends last when its server shuts down: a retryable failure, with no id, so that `Last-Event-ID` stays the last real event's. */
export const shutdownFailure = () => new ServiceUnavailableError('the server is shutting down: reconnect and resume the stream from the last event id');

/**
 * The streams one server has open, each with what ends it with its final event, so that its
 * shutdown ends its own streams only (several servers may share a process: a test's stacks).
 */
export class ServedStreams {
  readonly open = new Set<() => void>();

  /** Runs a fetch handler so that the streams it opens are this server's. */
  track<A extends unknown[]>(handler: (request: Request, ...rest: A) => Response | Promise<Response>): (request: Request, ...rest: A) => Promise<Response> {
    return async (request, ...rest) => serving.run(this, () => handler(request, ...rest));
  }

  /** Ends every stream of this server still open with its final event. */
  endAll(): void {
    for (const end of [...this.open]) end();
  }
}

const serving = new AsyncLocalStorage<ServedStreams>();
/** Streams opened outside any tracked server (none in the platform): ended by nobody. */
const untracked = new ServedStreams();

/** Records an open event stream of the server answering now (api-edge/plugins/sse.ts): `end` writes its final event and closes it. Returns what forgets it. */
export function openStream(end: () => void): () => void {
  const streams = serving.getStore() ?? untracked;
  streams.open.add(end);
  return () => streams.open.delete(end);
}

const isEventStream = (res: ServerResponse) => String(res.getHeader('content-type') ?? '').startsWith('text/event-stream');

/**
 * A node:http server's drained close. Call `watch` once, before it listens; `close(graceMs)` then
 * stops accepting connections, closes idle kept-alive ones, answers what is still asked on a busy
 * one with `Connection: close`, ends the event streams (`endStreams`), waits up to `graceMs` for
 * the other requests in flight, and closes every connection left.
 */
export function drainableNodeServer(server: Server, endStreams: () => void = () => {}) {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  server.prependListener('request', (_req, res: ServerResponse) => {
    inFlight.add(res);
    if (draining) res.setHeader('connection', 'close');
    res.once('close', () => inFlight.delete(res));
  });
  return async (graceMs: number): Promise<void> => {
    draining = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    endStreams();
    // A stream of the control plane (a subscription the edge follows) is never done: the edge's
    // own stream ends with its final event, and the client resumes elsewhere.
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && [...inFlight].some((res) => !isEventStream(res))) await sleep(Math.min(50, Math.max(1, deadline - Date.now())));
    server.closeAllConnections();
    await closed;
  };
}

/** Waits for `work` at most `graceMs`; true when it finished. */
export async function withinGrace(work: Promise<unknown>, graceMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
  try {
    return await Promise.race([work.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
