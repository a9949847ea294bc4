#!/usr/bin/env node
// The `svc` executable: runs the compiled client, dist/svc.mjs (built by `npm run build:cli` in a
// source checkout, and before packing).
let client;
try {
  client = await import('../dist/svc.mjs');
} catch (error) {
  const missing = error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('svc.mjs');
  if (!missing) throw error;
  process.stderr.write(
    'svc: the compiled client (cli/dist/svc.mjs) is missing.\n' +
      'In a source checkout, build it with `npm run build:cli` (or run the source with `npx tsx cli/main.ts`).\n',
  );
  process.exit(3);
}
process.exitCode = await client.main(process.argv.slice(2));
