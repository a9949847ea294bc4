import { randomUUID } from 'node:crypto';
import { createParser } from 'eventsource-parser';
import { FormData, request } from 'undici';

/**
 * The soak's operations against the edge: each one request (a chat answer and a synchronous
 * execution read to their end), resolving when it succeeded and throwing with the cause otherwise.
 * Realtime followers are long-lived streams beside them (`startFollower`).
 */

export type OperationKind = 'read' | 'list' | 'create' | 'update' | 'upload' | 'chat' | 'execute';

/** The load mix, in operations out of 100. */
export const MIX: Record<OperationKind, number> = { read: 30, list: 15, create: 10, update: 10, upload: 5, chat: 20, execute: 10 };

const REQUEST_TIMEOUT_MS = 30_000;
const QUESTIONS = ['How much notice do vacation requests need?', 'When are expenses reimbursed?', 'Who approves travel?'];

export interface Target {
  origin: string;
  tenantId: string;
  token: () => string;
  /** Ids of projects to read and update; creates add to it. */
  projects: string[];
  /** Synchronous executions answered 202: still running when the 10 s wait ended. */
  executionsStillRunning: number;
}

/** The kinds of the mix in a fixed, interleaved order of 100: `pick(n)` is the n-th operation's kind. */
export function mixOrder(): (n: number) => OperationKind {
  const slots: Array<{ kind: OperationKind; at: number }> = [];
  for (const [kind, weight] of Object.entries(MIX) as Array<[OperationKind, number]>) {
    for (let i = 0; i < weight; i++) slots.push({ kind, at: (i + 0.5) / weight });
  }
  const order = slots.sort((a, b) => a.at - b.at).map((s) => s.kind);
  return (n) => order[n % order.length]!;
}

class OperationError extends Error {}

async function call(target: Target, method: 'GET' | 'POST' | 'PATCH', path: string, options: { json?: unknown; form?: FormData; headers?: Record<string, string> } = {}) {
  const response = await request(`${target.origin}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${target.token()}`,
      ...(options.json !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    body: options.json !== undefined ? JSON.stringify(options.json) : options.form,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return response;
}

async function json(target: Target, method: 'GET' | 'POST' | 'PATCH', path: string, options: Parameters<typeof call>[3] = {}): Promise<any> {
  const response = await call(target, method, path, options);
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new OperationError(`${method} ${path.replace(/[0-9a-f-]{36}/g, ':id')}: ${response.statusCode} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : undefined;
}

const anyOf = <T>(items: T[]) => items[Math.floor(Math.random() * items.length)]!;

/** Runs one operation of `kind`. */
export async function runOperation(target: Target, kind: OperationKind): Promise<void> {
  switch (kind) {
    case 'read':
      await json(target, 'GET', `/api/svc/v3/resources/project/${anyOf(target.projects)}`);
      return;
    case 'list':
      await json(target, 'GET', `/api/svc/v3/resources?type=project&limit=20&sort=-createdAt`);
      return;
    case 'create': {
      const created = await json(target, 'POST', `/v4/data/resources/${target.tenantId}/project`, {
        json: { data: { name: `Soak ${randomUUID()}`, status: anyOf(['active', 'completed', 'in-progress']), budget: Math.round(Math.random() * 100_000) } },
        headers: { 'idempotency-key': randomUUID() },
      });
      // A bounded set to read from: the newest replace the oldest.
      target.projects.push(created.id);
      if (target.projects.length > 2_000) target.projects.shift();
      return;
    }
    case 'update':
      await json(target, 'PATCH', `/api/svc/v3/resources/project/${anyOf(target.projects)}`, { json: { budget: Math.round(Math.random() * 100_000) } });
      return;
    case 'upload': {
      const form = new FormData();
      form.append('type', 'handbook');
      form.append('autoIndex', 'true');
      const text = `Soak handbook ${randomUUID()}.\n${'Vacation requests need two weeks notice. Expenses are reimbursed monthly. '.repeat(20)}`;
      form.append('file', new Blob([text], { type: 'text/plain' }), 'handbook.txt');
      await json(target, 'POST', '/api/svc/v3/documents', { form });
      return;
    }
    case 'chat':
      await chat(target, anyOf(QUESTIONS));
      return;
    case 'execute': {
      const execution = await json(target, 'POST', '/api/svc/v3/orchestrate/workflows/project-briefing/execute', {
        json: { input: { status: 'active', question: 'Which project has the largest budget?' } },
      });
      if (execution.state !== 'completed' && execution.state !== 'running') throw new OperationError(`execution ${execution.state}: ${JSON.stringify(execution).slice(0, 200)}`);
      if (execution.state === 'running') target.executionsStillRunning++;
      return;
    }
  }
}

/** A v3 chat answer read to its end: it must end with `done`. */
async function chat(target: Target, message: string): Promise<void> {
  const response = await call(target, 'POST', '/api/svc/v3/chat', { json: { message }, headers: { accept: 'text/event-stream' } });
  if (response.statusCode !== 200) throw new OperationError(`POST /api/svc/v3/chat: ${response.statusCode} ${(await response.body.text()).slice(0, 200)}`);
  let last: { type: string; data?: unknown } | undefined;
  const parser = createParser({ onEvent: (event) => (last = JSON.parse(event.data) as { type: string }) });
  const decoder = new TextDecoder();
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  if (last?.type !== 'done') throw new OperationError(`chat stream ended with ${JSON.stringify(last).slice(0, 200)}`);
}

export interface Follower {
  /** Change events received so far. */
  events: number;
  /** Streams that ended other than by `expired` (or by `stop`), with the reason. */
  failures: string[];
  stop(): Promise<void>;
}

/**
 * A realtime follower of the tenant's resource changes: negotiates, holds the stream open and
 * counts its events; when the stream ends (`expired` after an hour, or cut) it negotiates again
 * and resumes after the last event. An end other than `expired` is a failure.
 */
export function startFollower(target: Target): Follower {
  const follower: Follower = { events: 0, failures: [], stop: async () => undefined };
  const controller = new AbortController();
  let lastEventId: string | undefined;
  const follow = async () => {
    while (!controller.signal.aborted) {
      let ending = 'the stream ended without an event saying why';
      try {
        const negotiated = await json(target, 'POST', '/v4/realtime/negotiate', { json: { tenant_id: target.tenantId, channels: ['resources'] } });
        const url = new URL(negotiated.url);
        const response = await request(`${target.origin}${url.pathname}${url.search}`, {
          headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
          signal: controller.signal,
        });
        if (response.statusCode !== 200) throw new OperationError(`realtime stream: ${response.statusCode} ${(await response.body.text()).slice(0, 200)}`);
        const parser = createParser({
          onEvent: (event) => {
            if (event.id) lastEventId = event.id;
            if (event.event?.startsWith('resource.')) follower.events++;
            if (event.event === 'expired') ending = 'expired';
            else if (event.event === 'revoked' || event.event === 'error') ending = `${event.event}: ${event.data.slice(0, 200)}`;
          },
        });
        const decoder = new TextDecoder();
        for await (const chunk of response.body as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
      } catch (error) {
        if (controller.signal.aborted) return;
        ending = (error as Error).message;
      }
      if (controller.signal.aborted) return;
      if (ending !== 'expired') follower.failures.push(ending);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  };
  const running = follow();
  follower.stop = async () => {
    controller.abort();
    await running;
  };
  return follower;
}
