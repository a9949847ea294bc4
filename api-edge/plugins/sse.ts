import { openStream, shutdownFailure } from '../drain.ts';

/** One server-sent event: its id (what `Last-Event-ID` names on resume) and its data line. */
export interface SseFrame {
  id?: number | string;
  data: string;
}

/** How long an idle stream waits before a comment line keeps proxies from closing it. */
export const DEFAULT_HEARTBEAT_MS = 15_000;

const encoder = new TextEncoder();

export const sseFrame = (frame: SseFrame) => `${frame.id === undefined ? '' : `id: ${frame.id}\n`}data: ${frame.data}\n\n`;

/**
 * A `text/event-stream` response over `frames`. Its headers and a first comment line go out at
 * once (before the first event), a comment heartbeat follows whenever the stream is idle, and
 * `end` is written after the last frame. A failure of `frames` midway becomes the frame
 * `failure` makes of it, then the stream ends cleanly. A client that goes away ends `frames`
 * (its `return`), which stops following; whatever produces the events is not stopped by it.
 * When its server shuts down, the stream ends with `failure` of a SERVICE_UNAVAILABLE error
 * (which carries no id, so `Last-Event-ID` names the last event sent) and `retry: 1000`.
 */
export function sseResponse(
  frames: AsyncIterator<SseFrame>,
  options: { headers?: Record<string, string>; heartbeatMs?: number; end?: string; failure: (error: unknown) => SseFrame },
): Response {
  let heartbeat: NodeJS.Timeout | undefined;
  let closed = false;
  let forget = () => {};
  let endForShutdown = () => {};
  const stop = async () => {
    closed = true;
    forget();
    clearInterval(heartbeat);
    await frames.return?.().catch(() => undefined);
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (text: string) => {
        if (!closed) controller.enqueue(encoder.encode(text));
      };
      write(': stream open\n\n');
      endForShutdown = () => {
        if (closed) return;
        // No `end`: the answer is not over, the client resumes it.
        write(`retry: 1000\n${sseFrame(options.failure(shutdownFailure()))}`);
        controller.close();
        void stop();
      };
      heartbeat = setInterval(() => write(': keep-alive\n\n'), options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
      heartbeat.unref();
      void (async () => {
        try {
          for (;;) {
            const next = await frames.next();
            if (next.done || closed) break;
            write(sseFrame(next.value));
          }
        } catch (error) {
          write(sseFrame(options.failure(error)));
        }
        if (closed) return;
        if (options.end) write(options.end);
        clearInterval(heartbeat);
        closed = true;
        forget();
        controller.close();
      })();
    },
    cancel: stop,
  });
  const response = new Response(body, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      // Proxies that buffer responses (nginx) must pass each event on as it comes.
      'x-accel-buffering': 'no',
      ...options.headers,
    },
  });
  forget = openStream(() => endForShutdown());
  return response;
}
