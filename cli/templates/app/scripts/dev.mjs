import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The dev server: `server.mjs` under `node --watch`, which restarts it when a file it loaded
 * changes (pages in `public/` are read on each request, so they need no restart). `svc dev
 * --no-turbo` sets SVC_DEV_TURBO=0: the server runs once, without watching.
 */
const watch = process.env.SVC_DEV_TURBO !== '0';
const server = fileURLToPath(new URL('../server.mjs', import.meta.url));
const child = spawn(process.execPath, [...(watch ? ['--watch', '--watch-preserve-output'] : []), server], { stdio: 'inherit' });
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopping = true;
    child.kill(signal);
  });
}
child.on('exit', (code) => process.exit(stopping ? 0 : (code ?? 1)));
