import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The client's own package: `cli/package.json` in a source checkout, the installed package's otherwise. */
export interface ClientPackage {
  name: string;
  version: string;
  /** The folder that holds the package.json. */
  root: string;
}

let found: ClientPackage | undefined;

/** Reads the client's package.json once (the build rewrites the URL to reach it from `dist/`). */
export function clientPackage(): ClientPackage {
  if (found) return found;
  const url = new URL('./package.json', import.meta.url);
  const { name, version } = JSON.parse(readFileSync(url, 'utf8')) as { name: string; version: string };
  return (found = { name, version, root: dirname(fileURLToPath(url)) });
}
