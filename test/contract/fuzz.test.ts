import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillPath, paramsOf } from '../harness/routes.ts';
import { startContractFixture, type ContractFixture } from './fixture.ts';
import { checkRequest, fuzz, fuzzedOperations, type FuzzRequest } from './fuzz.ts';
import { documentedOperations } from './operations.ts';

/**
 * The bounded run of the schema-driven fuzzer (test/contract/fuzz.ts) that `npm test` makes, and
 * the cross-tenant matrix. `npm run fuzz -- --runs N --seed S` runs the same file for longer
 * (FUZZ_RUNS, FUZZ_SEED, FUZZ_PATH and FUZZ_OPERATIONS carry its flags here).
 */
const settings = {
  runs: Number(process.env.FUZZ_RUNS ?? 6),
  seed: Number(process.env.FUZZ_SEED ?? 20_261_126),
  path: process.env.FUZZ_PATH || undefined,
  operations: process.env.FUZZ_OPERATIONS ? process.env.FUZZ_OPERATIONS.split(',') : undefined,
  trace: process.env.FUZZ_TRACE ? (line: string) => process.stderr.write(`[fuzz] ${line}\n`) : undefined,
};

let fixture: ContractFixture;
beforeAll(async () => {
  fixture = await startContractFixture();
}, 300_000);
afterAll(() => fixture?.close());

describe('schema-driven fuzzing', () => {
  it('keeps the contract on generated input, valid and invalid, of two tenants', { timeout: 30 * 60_000 }, async () => {
    // Every operation the documents describe (read from them: a route documented tomorrow is fuzzed too), or those asked for.
    expect(fuzzedOperations(settings).length).toBe(settings.operations ? settings.operations.length : documentedOperations().length);
    process.stderr.write(`[fuzz] ${fuzzedOperations(settings).length} operations, ${settings.runs} run(s) each, seed ${settings.seed}${settings.path ? `, path ${settings.path}` : ''}\n`);
    const { failures, statuses } = await fuzz(fixture, settings, (op, seen, failure) => {
      if (failure) process.stderr.write(`[fuzz] ${failure.report}\n`);
      else if (process.env.FUZZ_VERBOSE) process.stderr.write(`[fuzz] ${op.operationId} ${JSON.stringify(seen)}\n`);
    });
    process.stderr.write(`[fuzz] answers by status: ${JSON.stringify(statuses)}\n`);
    expect(failures.map((f) => f.report)).toEqual([]);
    // Both kinds of answer were reached: requests that got through, and requests refused.
    const count = (from: number, to: number) => Object.entries(statuses).reduce((n, [status, k]) => (Number(status) >= from && Number(status) < to ? n + k : n), 0);
    if (!settings.path && !settings.operations) {
      expect(count(200, 300)).toBeGreaterThan(0);
      expect(count(400, 500)).toBeGreaterThan(0);
    }
  });
});

describe('the cross-tenant matrix', () => {
  /**
   * Every documented operation with a parameter that names an object or a tenant: tenant B's
   * administrator names each of tenant A's objects in turn (the other parameters naming A's too,
   * or what every tenant shares), with the body the route's case sends. Each answer is 403 or
   * 404 (or 401 on a route whose credential is not the caller's token), conforms, carries none of
   * A's data and changes nothing.
   */
  it('answers 403 or 404 to tenant B naming any of tenant A’s objects, on every route that names one', { timeout: 300_000 }, async () => {
    const { a } = fixture;
    const problems: string[] = [];
    let checked = 0;
    for (const operation of documentedOperations()) {
      // Path parameters and tenant selectors name objects; a query's `type` is only a name to look up.
      const named = operation.parameters.filter((p) => a.names[p.name] && p.name !== 'oid' && (p.in === 'path' || ['tenant_id', 'X-Tenant-Id'].includes(p.name)));
      if (!named.length) continue;
      const fixed = new URLSearchParams(operation.case?.query ?? '');
      for (const param of named) {
        for (const text of a.names[param.name]!) {
          const pick = (name: string, own?: string): string => (name === param.name ? text : (own ?? a.names[name]?.[0] ?? fixture.shared[name]?.[0] ?? operation.case?.sample?.[name] ?? '00000000-0000-0000-0000-000000000000'));
          const request: FuzzRequest = { caller: 'b', path: {}, query: [...fixed.entries()], headers: {} };
          for (const name of paramsOf(operation.template)) request.path[name] = { text: pick(name), owner: a.names[name] ? 'other' : 'none' };
          if (param.in === 'query' || operation.case?.tenantFrom === 'query') request.query.push(['tenant_id', param.in === 'query' ? text : a.id]);
          if (param.in === 'header') request.headers[param.name] = { text, owner: 'other' };
          if (operation.body?.mediaType === 'application/json' && operation.case?.body !== undefined) request.body = { kind: 'json', value: operation.case.body };
          if (operation.body?.mediaType === 'application/octet-stream') request.body = { kind: 'bytes', value: new TextEncoder().encode('cross-tenant') };
          const { answer, problems: found } = await checkRequest(fixture, operation, request);
          checked++;
          // A route that authenticates by its own credential (a webhook's signature), not B's token, refuses B's unsigned call with 401.
          const refusals = operation.schemes.includes('bearer') ? [403, 404] : [401, 403, 404];
          if (!refusals.includes(answer.status)) found.push(`${operation.method} ${fillPath(operation.template, Object.fromEntries(Object.entries(request.path).map(([k, v]) => [k, v.text])))}: ${answer.status} ${answer.text.slice(0, 200)}`);
          problems.push(...found);
        }
      }
    }
    expect(checked).toBeGreaterThan(documentedOperations().length);
    expect(problems).toEqual([]);
  });
});
