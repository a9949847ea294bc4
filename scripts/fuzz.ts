import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';

/**
 * `npm run fuzz -- --runs N --seed S`: the schema-driven fuzzer of test/contract/fuzz.test.ts for
 * longer than `npm test` runs it, against the same real stack (PostgreSQL, Temporal). A failure
 * prints its seed and path with the command that replays it (`--seed S --path P --operation ID`).
 */
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '200' },
    seed: { type: 'string' },
    path: { type: 'string' },
    operation: { type: 'string', multiple: true },
    verbose: { type: 'boolean', default: false },
    trace: { type: 'boolean', default: false },
  },
});
const seed = values.seed ?? String(randomInt(2 ** 31));
process.stderr.write(`fuzz: ${values.runs} run(s) per operation, seed ${seed}\n`);
const result = spawnSync('npx', ['vitest', 'run', '--project', 'in-process', 'test/contract/fuzz.test.ts', '-t', 'generated input'], {
  stdio: 'inherit',
  env: {
    ...process.env,
    FUZZ_RUNS: values.runs,
    FUZZ_SEED: seed,
    ...(values.path ? { FUZZ_PATH: values.path } : {}),
    ...(values.operation?.length ? { FUZZ_OPERATIONS: values.operation.join(',') } : {}),
    ...(values.verbose ? { FUZZ_VERBOSE: '1' } : {}),
    ...(values.trace ? { FUZZ_TRACE: '1' } : {}),
  },
});
process.exit(result.status ?? 1);
