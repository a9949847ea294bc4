/** How often a long step reports: often on a terminal, less often in a log file. */
const TERMINAL_INTERVAL_MS = 5_000;
const LOG_INTERVAL_MS = 15_000;

export interface ProgressOptions {
  /** What is being done, e.g. "building the temporal CLI". */
  label: string;
  /** How long it typically takes, e.g. "5-10 minutes on 2 cores"; said at the start and with each report. */
  typical?: string;
  log?: (message: string) => void;
  /** More to say with each report (packages compiled so far). */
  detail?: () => string;
  /** Default: every 5 s when stderr is a terminal, else every 15 s. */
  intervalMs?: number;
}

/**
 * Says that a long first-run step starts (and how long it typically takes), then the time elapsed
 * every few seconds until `stop` is called, so that a cold start never looks stuck.
 */
export function reportProgress(options: ProgressOptions): { stop(): void } {
  const { label, typical, log } = options;
  if (!log) return { stop: () => {} };
  const started = Date.now();
  const estimate = typical ? ` (typically ${typical})` : '';
  log(`${label}: first run only${estimate}`);
  const interval = options.intervalMs ?? (process.stderr.isTTY ? TERMINAL_INTERVAL_MS : LOG_INTERVAL_MS);
  const timer = setInterval(() => {
    const detail = options.detail?.();
    log(`still ${label}: ${elapsed(started)} elapsed${typical ? ` of typically ${typical}` : ''}${detail ? `; ${detail}` : ''}`);
  }, interval);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** `42s` or `7m05s`. */
export function elapsed(since: number): string {
  const seconds = Math.round((Date.now() - since) / 1000);
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}
