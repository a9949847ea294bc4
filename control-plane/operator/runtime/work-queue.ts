/** What a run of a key may ask for: to be run again after `delayMs` (urgent). */
export type RunAgain = { delayMs: number } | undefined | void;

/**
 * The controller's queue of object keys: each key is due at a time, urgent keys (watch events that
 * need work, status notifications, requeues) go before background ones (periodic re-lists), at
 * most `concurrency` run at once, and a key never runs twice at once (added again while it runs,
 * it runs again afterwards). A run that resolves to `{ delayMs }` adds its key again, due then.
 */
export function createWorkQueue(options: { concurrency: number; run(key: string): Promise<RunAgain> }) {
  const urgent = new Map<string, number>();
  const background = new Map<string, number>();
  const running = new Set<string>();
  let open = false;

  const sooner = (queue: Map<string, number>, key: string, at: number) => {
    const current = queue.get(key);
    if (current === undefined || at < current) queue.set(key, at);
  };

  function pump(): void {
    if (!open) return;
    const now = Date.now();
    for (const queue of [urgent, background]) {
      for (const [key, at] of queue) {
        if (running.size >= options.concurrency) return;
        if (at > now || running.has(key)) continue;
        queue.delete(key);
        running.add(key);
        void options
          .run(key)
          .then((again) => {
            if (again) add(key, { delayMs: again.delayMs });
          })
          .finally(() => {
            running.delete(key);
            pump();
          });
      }
    }
  }

  /** Adds `key`, due after `delayMs`; a key already due sooner keeps its time. */
  function add(key: string, opts: { delayMs?: number; background?: boolean } = {}): void {
    const at = Date.now() + (opts.delayMs ?? 0);
    if (opts.background) {
      if (!urgent.has(key)) sooner(background, key, at);
    } else {
      background.delete(key);
      sooner(urgent, key, at);
    }
    if (at <= Date.now()) pump();
  }

  const timer = setInterval(pump, 100);
  timer.unref();

  return {
    add,
    /** Starts or stops handing out keys; what runs finishes. */
    setOpen(value: boolean): void {
      open = value;
      if (value) pump();
    },
    /** Keys running now. */
    get runningCount(): number {
      return running.size;
    },
    close(): void {
      open = false;
      clearInterval(timer);
    },
  };
}

export type WorkQueue = ReturnType<typeof createWorkQueue>;
