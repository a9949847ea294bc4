import { build, type Metafile, type Plugin } from 'esbuild';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The client's package folder (`cli/`) and where its compiled form goes. */
export const CLIENT_DIR = fileURLToPath(new URL('..', import.meta.url));
export const DIST_DIR = join(CLIENT_DIR, 'dist');

/**
 * Packages the compiled client must not contain: a runtime TypeScript loader built on a native
 * binary cannot run from a bundle. They stay external imports, which resolve in a source checkout
 * but not in an installed client: a project's TypeScript files are loaded through
 * `services/ts-module.ts` instead.
 */
const REFUSED = ['tsx', 'esbuild'];

/**
 * jiti's ES module entry loads its compiler through a path computed at run time, which a bundle
 * cannot follow; its CommonJS entry requires it by name, so the compiler lands in jiti's own chunk.
 */
const jitiAsCommonJs: Plugin = {
  name: 'jiti-commonjs',
  setup(b) {
    const require = createRequire(import.meta.url);
    b.onResolve({ filter: /^jiti$/ }, () => ({ path: require.resolve('jiti') }));
  },
};

const FILE_URL = /new URL\(\s*(['"])(\.{1,2}\/[^'"]*)\1\s*,\s*import\.meta\.url\s*\)/g;

/**
 * Files the client reads at run time (its package.json, the templates) are addressed as
 * `new URL('<relative path>', import.meta.url)` from the module that reads them. In the build
 * every module lives in `dist/`, so each such path is rewritten to reach the same file from
 * there. A path that leaves the client's folder names a file the package will not contain: a
 * problem (the repository's own package.json is not the client's: use `clientPackage()`).
 */
function fileUrls(problems: string[]): Plugin {
  return {
    name: 'file-urls',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (!args.path.startsWith(CLIENT_DIR) || args.path.includes(`${sep}node_modules${sep}`)) return undefined;
        const source = await readFile(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        const contents = source.replace(FILE_URL, (whole, quote: string, path: string) => {
          const target = resolve(dirname(args.path), path);
          const inside = relative(CLIENT_DIR, target);
          if (inside.startsWith('..') || isAbsolute(inside)) {
            problems.push(`${relative(CLIENT_DIR, args.path)} reads ${path}, outside the client's package`);
            return whole;
          }
          let fromDist = relative(DIST_DIR, target).split(sep).join('/');
          if (!fromDist.startsWith('.')) fromDist = `./${fromDist}`;
          if (path.endsWith('/') && !fromDist.endsWith('/')) fromDist += '/';
          return `new URL(${quote}${fromDist}${quote}, import.meta.url)`;
        });
        return { contents, loader: 'ts' };
      });
    },
  };
}

export interface BuildResult {
  outdir: string;
  /** Every file written, with its size in bytes. */
  files: Array<{ file: string; bytes: number }>;
  /** What would break an installed client (see {@link buildClient}); empty when nothing. */
  problems: string[];
  /**
   * The source files and packages `svc.mjs` loads before it runs anything (its static imports,
   * followed through the chunks), relative to the client's folder: what every start pays for.
   */
  startup: string[];
}

/**
 * Compiles the client (`main.ts` and everything it imports, dependencies included) into one ES
 * module `svc.mjs` and the chunks its lazy imports load, for Node 20. Built in a sibling folder
 * and swapped in, so a client started meanwhile runs the old build or the new one, whole; when
 * nothing changed, `dist/` is left as it is.
 *
 * Problems that break only an installed client, not this checkout (an import of a refused
 * package, a file read from outside the client's folder) are printed as warnings; with
 * `strict` (before packing) they fail the build and nothing is written.
 */
export async function buildClient(options: { outdir?: string; strict?: boolean } = {}): Promise<BuildResult> {
  const outdir = options.outdir ?? DIST_DIR;
  const staging = `${outdir}.build-${process.pid}-${Date.now().toString(36)}`;
  const problems: string[] = [];
  let startup: string[] = [];
  await mkdir(dirname(outdir), { recursive: true });
  try {
    const result = await build({
      absWorkingDir: CLIENT_DIR,
      entryPoints: { svc: join(CLIENT_DIR, 'main.ts') },
      outdir: staging,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      // Whitespace and syntax only: names stay, so a stack trace (SVC_DEBUG=1) still reads.
      minifyWhitespace: true,
      minifySyntax: true,
      legalComments: 'none',
      metafile: true,
      logLevel: 'warning',
      external: REFUSED.flatMap((name) => [name, `${name}/*`]),
      plugins: [jitiAsCommonJs, fileUrls(problems)],
      // CommonJS dependencies require Node's built-in modules by name.
      banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
    });
    problems.push(...refusedImports(result.metafile));
    startup = startupInputs(result.metafile, relative(CLIENT_DIR, join(staging, 'svc.mjs')));
    if (problems.length && options.strict) {
      throw new Error(`the client cannot be packed:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    }
    for (const problem of problems) process.stderr.write(`warning: an installed client would break: ${problem}\n`);
    await writeFile(join(staging, 'THIRD-PARTY-LICENSES.txt'), thirdPartyLicenses(result.metafile));
    if (!sameFiles(staging, outdir)) {
      const old = `${outdir}.old-${process.pid}-${Date.now().toString(36)}`;
      if (existsSync(outdir)) await rename(outdir, old);
      await rename(staging, outdir);
      await rm(old, { recursive: true, force: true });
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return {
    outdir,
    files: readdirSync(outdir).map((file) => ({ file, bytes: readFileSync(join(outdir, file)).length })),
    problems,
    startup,
  };
}

/** Whether two folders hold the same files with the same bytes (a rebuild of unchanged sources then leaves `dist/` alone). */
function sameFiles(a: string, b: string): boolean {
  if (!existsSync(b)) return false;
  const names = readdirSync(a).sort();
  const others = readdirSync(b).sort();
  return names.length === others.length && names.every((name, i) => name === others[i] && readFileSync(join(a, name)).equals(readFileSync(join(b, name))));
}

/** The package folder of a bundled input (`../node_modules/@scope/name/lib/x.js` -> `../node_modules/@scope/name`). */
const packageOf = (input: string) => /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];

/** The inputs of `entry` and of every chunk it imports statically; a package is named by its folder. */
function startupInputs(metafile: Metafile, entry: string): string[] {
  const seen = new Set<string>();
  const visit = (output: string) => {
    if (seen.has(output) || !metafile.outputs[output]) return;
    seen.add(output);
    for (const imported of metafile.outputs[output].imports) if (imported.kind === 'import-statement') visit(imported.path);
  };
  visit(entry.split(sep).join('/'));
  const inputs = [...seen].flatMap((output) => Object.keys(metafile.outputs[output]!.inputs));
  return [...new Set(inputs.map((input) => packageOf(input) ?? input))].sort();
}

/** The refused packages the client imports (left external: an installed client has no copy of them). */
function refusedImports(metafile: Metafile): string[] {
  const found = new Map<string, string>();
  for (const [input, { imports }] of Object.entries(metafile.inputs)) {
    for (const imported of imports) {
      const name = imported.path.split('/')[0]!;
      if (imported.external && REFUSED.includes(name) && !packageOf(input)) found.set(`${input}:${imported.path}`, `${input} imports ${imported.path}: load a project's TypeScript with importTypeScript() of services/ts-module.ts`);
    }
  }
  return [...found.values()];
}

/** The name, version, licence and licence text of every package compiled into the client. */
function thirdPartyLicenses(metafile: Metafile): string {
  const packages = [...new Set(Object.keys(metafile.inputs).map(packageOf).filter((p): p is string => !!p))].sort();
  const sections = packages.map((dir) => {
    const abs = join(CLIENT_DIR, dir);
    const manifest = JSON.parse(readFileSync(join(abs, 'package.json'), 'utf8')) as { name: string; version: string; license?: string };
    const licenseFile = readdirSync(abs).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    const text = licenseFile ? readFileSync(join(abs, licenseFile), 'utf8').trim() : `(no licence file; package.json says ${manifest.license ?? 'nothing'})`;
    return `${manifest.name}@${manifest.version} (${manifest.license ?? 'unknown'})\n\n${text}\n`;
  });
  return `Packages compiled into the svc client, with their licences.\n\n${sections.join('\n' + '-'.repeat(72) + '\n\n')}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // `--strict` (before packing): what would break an installed client fails the build.
  const { outdir, files } = await buildClient({ strict: process.argv.includes('--strict') });
  const total = files.reduce((sum, f) => sum + f.bytes, 0);
  process.stderr.write(`built ${relative(process.cwd(), join(outdir, 'svc.mjs')) || 'svc.mjs'} (${files.length} files, ${(total / 1024).toFixed(0)} KiB)\n`);
}
