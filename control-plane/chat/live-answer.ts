import { isTerminal, type ChatEvent, type NumberedEvent } from './chat.schema.ts';

/** The events of one answer produced in this process, with their numbers, and its followers here. */
export class LiveAnswer {
  readonly events: NumberedEvent[] = [];
  private wake: Array<() => void> = [];

  push(event: ChatEvent): NumberedEvent {
    const numbered = { id: this.events.length + 1, event };
    this.events.push(numbered);
    for (const resolve of this.wake.splice(0)) resolve();
    return numbered;
  }

  /** Resolves at the next event. */
  changed(): Promise<void> {
    return new Promise((resolve) => this.wake.push(resolve));
  }
}

/** Resolves when `signal` aborts (never without one). */
export const abortedBy = (signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => (signal?.aborted ? resolve() : signal?.addEventListener('abort', () => resolve(), { once: true })));

/** The events of an answer this process produces, after event `after`, until its last one or until `signal` aborts. */
export async function* followLive(answer: LiveAnswer, after: number, signal?: AbortSignal): AsyncGenerator<NumberedEvent> {
  let next = 0;
  for (;;) {
    while (next < answer.events.length) {
      const numbered = answer.events[next++]!;
      if (numbered.id > after) yield numbered;
      if (isTerminal(numbered.event)) return;
    }
    if (signal?.aborted) return;
    await Promise.race([answer.changed(), abortedBy(signal)]);
  }
}
