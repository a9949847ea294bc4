/**
 * Polls `probe` until `done` holds for its value, and returns that value. A probe that throws
 * counts as not done yet; at the deadline it fails with the last value or error it saw.
 */
export async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      last = await probe();
      if (done(last as T)) return last as T;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`condition not reached within ${timeoutMs} ms; last seen: ${String(seen).slice(0, 600)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
