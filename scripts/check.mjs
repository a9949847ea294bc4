// The static checks `npm test` runs before the tests: the type check and the linter, side by side.
// Each one's output is printed when it ends; the exit code is 1 when either finds a problem.
// Plain Node ESM, as ensure-deps.mjs.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);

const checks = [
  { name: 'type check (tsc --noEmit)', command: bin('tsc'), args: ['--noEmit'] },
  { name: 'lint (eslint .)', command: bin('eslint'), args: ['.'] },
];

/** Runs one check, its output kept until it ends; resolves whether it passed. */
function run({ name, command, args }) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, FORCE_COLOR: process.stdout.isTTY ? '1' : '0' } });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const finish = (passed, detail) => {
      const seconds = Math.round((Date.now() - started) / 1000);
      if (passed) console.log(`${name}: passed (${seconds} s)`);
      else console.error(`${output.trimEnd()}${output.trim() ? '\n' : ''}${name}: FAILED (${detail}, ${seconds} s)`);
      resolve(passed);
    };
    child.on('error', (error) => finish(false, `could not start: ${error.message}`));
    child.on('close', (code, signal) => finish(code === 0, signal ? `stopped by ${signal}` : `exit code ${code}`));
  });
}

const results = await Promise.all(checks.map(run));
if (results.includes(false)) {
  console.error('The static checks failed: fix the problems above before the tests run.');
  process.exit(1);
}
