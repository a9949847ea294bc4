import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/**
 * A request listener for a test server that answers from an async handler. The handler's promise
 * is left to run: should it reject, the rejection is unhandled and fails the test run, as a throw in
 * a test server should.
 */
export const asyncListener =
  (handle: (req: IncomingMessage, res: ServerResponse) => Promise<unknown>): RequestListener =>
  (req, res) =>
    void handle(req, res);
