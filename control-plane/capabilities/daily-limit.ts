/** Seconds until the next UTC day, when a daily limit (chat messages, OCR pages) starts again; at least 1. */
export function secondsToNextUtcDay(now = new Date()): number {
  return Math.max(1, Math.ceil((Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000));
}
