import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../api-edge/openapi/document.ts';
import { ensureChromium } from '../../scripts/stack/chromium.ts';
import { ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';

/** The API documents and the reference page, as a client and a person in a real browser get them. */
let stack: TestStack;
let browser: Browser;
beforeAll(async () => {
  const [started, executablePath] = await Promise.all([startTestStack(), ensureChromium({ log: (msg) => process.stderr.write(`[chromium] ${msg}\n`) })]);
  stack = started;
  browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
}, 900_000);
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

describe('the OpenAPI documents', () => {
  it.each([
    ['v3', `${V3}/openapi.json`],
    ['v4', '/v4/openapi.json'],
  ] as const)('%s is served without authentication, with the rate-limit headers', async (version, path) => {
    const answer = await fetch(stack.url + path);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(Number(answer.headers.get('x-ratelimit-limit'))).toBeGreaterThan(0);
    expect(await answer.json()).toEqual(buildOpenApiDocument(version));
  });

  it('are served for GET only: other methods still need authentication', async () => {
    expect((await stack.request('POST', `${V3}/openapi.json`)).status).toBe(401);
  });
});

describe('the reference page', () => {
  it('lists the operations under a self-only policy and makes a call with a bearer token', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    try {
      const answer = await page.goto(`${stack.url}/docs`);
      expect(answer?.status()).toBe(200);
      expect(await answer?.headerValue('content-security-policy')).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self'/);
      await page.locator('#operations-Users-getCurrentUser').waitFor({ timeout: 20_000 });
      const listed = await page.locator('.opblock').evaluateAll((blocks) => blocks.map((b) => b.id.replace(/^operations-[^-]+-/, '')));
      const documented = Object.values((buildOpenApiDocument('v3') as { paths: Record<string, Record<string, { operationId: string }>> }).paths).flatMap((p) => Object.values(p).map((o) => o.operationId));
      expect(listed.sort()).toEqual(documented.sort());

      const token = await stack.token(ADMIN);
      await page.evaluate((bearer) => (globalThis as unknown as { ui: { preauthorizeApiKey(name: string, value: string): void } }).ui.preauthorizeApiKey('bearer', bearer), token);
      const operation = page.locator('#operations-Users-getCurrentUser');
      await operation.locator('.opblock-summary').click();
      await operation.locator('button.try-out__btn').click();
      await operation.locator('button.execute').click();
      const status = operation.locator('.live-responses-table tbody .response-col_status').first();
      await status.waitFor({ timeout: 20_000 });
      expect((await status.textContent())?.trim()).toBe('200');
      expect(await operation.locator('.live-responses-table tbody .response-col_description').first().textContent()).toContain(ADMIN);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('switches to v4', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${stack.url}/docs?api=v4`);
      await page.locator('#operations-Identity-getMe').waitFor({ timeout: 20_000 });
    } finally {
      await page.close();
    }
  });
});
