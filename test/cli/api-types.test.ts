import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_TYPES_PATH, renderApiTypes } from '../../cli/scripts/api-types.ts';

describe("the CLI's wire types", () => {
  it('are generated from the v4 OpenAPI document as it is now', { timeout: 120_000 }, async () => {
    expect(readFileSync(API_TYPES_PATH, 'utf8'), 'cli/api/v4.d.ts is out of date: run npm run api-types').toBe(await renderApiTypes());
  });
});
