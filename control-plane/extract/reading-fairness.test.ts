import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { widePageTreePdf } from './fixtures/bombs.ts';
import { createExtractor } from './extractor.ts';

const sample = new Uint8Array(readFileSync(fileURLToPath(new URL('./fixtures/sample.pdf', import.meta.url))));

/**
 * The reading threads are shared by every tenant of a process: one tenant's files that each keep a
 * reader busy to the time limit must not hold them all while another tenant's file waits.
 */
describe('reading threads shared between tenants', () => {
  it("reads another tenant's file while one tenant's slow files hold what they may", async () => {
    const extractor = createExtractor({ limits: { timeoutMs: 8_000 }, concurrency: 2 });
    try {
      const settled: string[] = [];
      const slow = [1, 2, 3].map((n) =>
        extractor.check({ filename: `pages-${n}.pdf`, bytes: widePageTreePdf(600_000), owner: 'tenant-a' }).then(
          () => settled.push(`a${n} passed`),
          () => settled.push(`a${n} refused`),
        ),
      );
      const other = extractor.extract({ filename: 'sample.pdf', bytes: sample, owner: 'tenant-b' }).then((read) => {
        settled.push('b read');
        return read;
      });
      expect((await other).pages).toBe(2);
      await Promise.all(slow);
      // Tenant b's file was read while tenant a's first file still held its thread.
      expect(settled[0]).toBe('b read');
      expect(settled.filter((s) => s.startsWith('a'))).toHaveLength(3);
      expect(settled.filter((s) => s.endsWith('refused'))).toHaveLength(3);
    } finally {
      await extractor.close();
    }
  }, 120_000);
});
