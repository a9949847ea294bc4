import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The Bun executable that `npm install` puts in node_modules (the `bun` package). */
export function bunExecutable(): string {
  const path = fileURLToPath(new URL('../../node_modules/.bin/bun', import.meta.url));
  if (!existsSync(path)) throw new Error(`Bun is not installed at ${path}: run npm install`);
  return path;
}
