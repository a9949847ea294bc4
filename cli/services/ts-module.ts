/**
 * Loads a project's TypeScript module (the object-types file, `svc.config.ts`) at run time. The
 * client itself is compiled JavaScript; this is the one place that compiles a file of the user's,
 * with jiti (pure JavaScript, bundled into the client, so an installed client needs nothing else).
 * It works whether the project is an ES module package or CommonJS, and follows the file's
 * relative imports. Nothing is cached on disk or between calls: each load reads the file as it is.
 */
export async function importTypeScript<T = Record<string, unknown>>(file: string): Promise<T> {
  // The default export: jiti's ES module entry has it, and so has its CommonJS entry, which the build compiles in.
  const { default: createJiti } = await import('jiti');
  const jiti = createJiti(file, { fsCache: false, moduleCache: false, interopDefault: false });
  return jiti.import<T>(file);
}
