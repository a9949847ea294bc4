import { execFile } from 'node:child_process';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { resolveBaseUrl, tokensPath } from '../config.ts';
import { CliError, type ErrorBody } from '../errors.ts';
import type { ApiClient } from './api-client.ts';
import { checkEnv, checkLogin, checkPlatform } from './dev.service.ts';
import { readEnvValues, updateEnvFile } from './env-file.ts';
import { loadObjectTypes, validateObjectTypes } from './object-types.service.ts';
import { ENV_FILE, findProjectRoot, loadProjectConfig, projectProblems, readManifest, writeManifest, type ProjectConfig } from './project.service.ts';
import { releaseStatus } from './release.service.ts';
import { applySync, expectedFiles, planSync, templateDrift } from './template.service.ts';

/** `ok`; `warn` (worth knowing, fails nothing); `fail`; `skip` (what it needs is missing); `fixed` (was wrong, `--fix` repaired it). */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip' | 'fixed';

export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  detail: string;
  /** The client's error for a failed check. */
  error?: ErrorBody;
  /** What to do about a warning or failure (a command to run, a file to edit). */
  hint?: string;
}

export interface DoctorReport {
  /** No check failed. */
  ok: boolean;
  projectDir?: string;
  checks: DoctorCheck[];
  summary: Record<CheckStatus, number>;
}

export interface DoctorOptions {
  profile: string;
  /** The client's v4 client (base URL and token resolved), for the login check's call. */
  api: () => Promise<ApiClient>;
  fix: boolean;
  checkUpdates: boolean;
  cwd?: string;
}

/** The outcome of one check's run: a status other than `fail` and a detail (a thrown CliError or {@link Failed} is the failure). */
type Outcome = Omit<DoctorCheck, 'name'>;

/** A failure with more to say than its error's message: the detail, and what to do. */
class Failed extends Error {
  constructor(
    readonly error: CliError,
    readonly detail: string,
    readonly hint?: string,
  ) {
    super(detail);
  }
}

async function run(name: string, check: () => Promise<Outcome>): Promise<DoctorCheck> {
  try {
    return { name, ...(await check()) };
  } catch (error) {
    if (error instanceof Failed) return { name, status: 'fail', detail: error.detail, error: error.error.toJSON(), hint: error.hint ?? error.error.suggestion };
    if (error instanceof CliError) return { name, status: 'fail', detail: error.message, error: error.toJSON(), hint: error.suggestion };
    throw error;
  }
}

const skip = (name: string, detail: string): DoctorCheck => ({ name, status: 'skip', detail });

const gitIgnores = (root: string, path: string) =>
  new Promise<boolean | undefined>((resolve) => {
    // Exit 0: ignored; 1: not ignored; anything else (no git, not a repository): unknown.
    execFile('git', ['check-ignore', '-q', path], { cwd: root, timeout: 10_000 }, (error) => resolve(!error ? true : (error as { code?: unknown }).code === 1 ? false : undefined));
  });

/**
 * The project and the client's setup, checked one by one; every check runs whatever the others
 * gave (one that needs what an earlier one lacked is skipped). With `fix`, what can be repaired
 * on this machine is: scaffold files that are missing, or outdated and unedited, are written from
 * the client's template (an edited one is left alone); `BASE_URL_PUBLIC_API` is added to a missing
 * or incomplete `.env.local` when the client knows the address; `.env.local` is added to
 * `.gitignore`; `.env.local` and the tokens file are made readable by their owner only. Nothing is sent anywhere but
 * `GET /health` and `GET /v4/identity/me` to the platform, and (with `checkUpdates`) the release
 * registry's package document.
 */
export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const checks: DoctorCheck[] = [];
  const root = await findProjectRoot(options.cwd);
  checks.push(
    root
      ? { name: 'project', status: 'ok', detail: root }
      : await run('project', async () => {
          throw new CliError('E001');
        }),
  );

  let config: ProjectConfig | undefined;
  let envValues: Record<string, string> = {};
  if (!root) {
    for (const name of ['template', 'structure', 'config', 'env', 'env ignored', 'env file mode', 'object types']) checks.push(skip(name, 'not in a project'));
  } else {
    checks.push(await run('template', () => templateCheck(root, options.fix)));
    checks.push(
      await run('structure', async () => {
        const problems = await projectProblems(root);
        if (problems.length) throw new Failed(new CliError('E005'), problems.join('; '), 'svc init --current-dir restores the scaffold; svc doctor --fix writes missing scaffold files');
        return { status: 'ok', detail: 'svc.config.ts, svc.project.json and package.json with a "dev" script' };
      }),
    );
    checks.push(
      await run('config', async () => {
        config = await loadProjectConfig(root);
        return { status: 'ok', detail: `svc.config.ts loads (env file ${config.env.file}, object types ${config.objectTypes})` };
      }),
    );
    checks.push(config ? await run('env', () => envCheck(root, config!, options, (values) => (envValues = values))) : skip('env', 'svc.config.ts does not load'));
    checks.push(await run('env ignored', () => ignoredCheck(root, config?.env.file ?? ENV_FILE, options.fix)));
    checks.push(await run('env file mode', () => envModeCheck(join(root, config?.env.file ?? ENV_FILE), options.fix)));
    checks.push(
      await run('object types', async () => {
        const { file, types } = await loadObjectTypes(root);
        const problems = validateObjectTypes(types);
        if (problems.length) throw new CliError('E301', { details: problems.join('; ') });
        return { status: 'ok', detail: `${types.length} valid in ${file.slice(root.length + 1)}` };
      }),
    );
  }

  let reachable = false;
  checks.push(
    await run('platform', async () => {
      const baseUrl = (await resolveBaseUrl(options.profile)) ?? envValues['BASE_URL_PUBLIC_API'];
      if (!baseUrl) throw new CliError('E002', { var: 'BASE_URL_PUBLIC_API' });
      const check = await checkPlatform(baseUrl);
      reachable = true;
      return { status: 'ok', detail: check.detail };
    }),
  );
  checks.push(
    await run('login', async () => {
      const check = await checkLogin(options.profile);
      if (!reachable) return { status: 'warn', detail: `${check.detail}, not confirmed: the platform did not answer` };
      const me = await (await options.api()).request<{ email?: string }>('GET', '/v4/identity/me');
      return { status: 'ok', detail: `${me.body.email ?? 'a user'} (${check.detail})` };
    }),
  );
  checks.push(await run('tokens file', () => tokensFileCheck(options.fix)));
  if (options.checkUpdates) {
    checks.push(
      await run('release', async () => {
        const status = await releaseStatus();
        return status.updateAvailable
          ? { status: 'warn', detail: `${status.current} is not the latest release, ${status.latest} (${status.registry})`, hint: 'run svc update' }
          : { status: 'ok', detail: `${status.current} (latest release ${status.latest}, ${status.registry})` };
      }),
    );
  }

  const summary: Record<CheckStatus, number> = { ok: 0, warn: 0, fail: 0, skip: 0, fixed: 0 };
  for (const check of checks) summary[check.status]++;
  return { ok: summary.fail === 0, ...(root ? { projectDir: root } : {}), checks, summary };
}

/**
 * Drift of the scaffold files: a missing one fails, an outdated or edited one is a warning. With
 * `fix`, missing files and outdated unedited ones are written from the template and recorded in
 * the manifest; an edited one is left alone.
 */
async function templateCheck(root: string, fix: boolean): Promise<Outcome> {
  const drift = await templateDrift(root);
  const pathsOf = (status: string) => drift.files.filter((f) => f.status === status).map((f) => f.path);
  const [missing, outdated, edited] = [pathsOf('missing'), pathsOf('outdated'), pathsOf('modified')];
  const editedNote = edited.length ? `; edited here: ${edited.join(', ')}` : '';
  const editedHint = 'svc template check shows the drift; svc init --current-dir updates edited files, keeping a .bak copy';
  if (!missing.length && !outdated.length) {
    return edited.length
      ? { status: 'warn', detail: `scaffold files differ from the client's template${editedNote}`, hint: editedHint }
      : { status: 'ok', detail: `no drift from the client's template (${drift.clientVersion})` };
  }
  const parts = [missing.length ? `missing: ${missing.join(', ')}` : '', outdated.length ? `outdated: ${outdated.join(', ')}` : ''].filter(Boolean).join('; ');
  if (!fix) {
    const hint = 'svc doctor --fix writes missing and outdated unedited files from the template';
    if (missing.length) throw new Failed(new CliError('E005'), `${parts}${editedNote}`, hint);
    return { status: 'warn', detail: `${parts}${editedNote}`, hint };
  }
  const repairable = [...missing, ...outdated];
  const { manifest } = await readManifest(root);
  const files = (await expectedFiles(manifest!)).filter((f) => repairable.includes(f.path));
  const steps = await planSync(root, files, manifest!.template.files);
  const { hashes } = await applySync(root, files, steps, { conflicts: 'skip' });
  await writeManifest(root, { ...manifest!, template: { ...manifest!.template, files: { ...manifest!.template.files, ...hashes } } });
  return { status: 'fixed', detail: `wrote from the client's template: ${repairable.join(', ')}${editedNote}`, ...(edited.length ? { hint: editedHint } : {}) };
}

/**
 * The variables svc.config.ts requires, from `.env.local` or the environment. With `fix`, a
 * missing `BASE_URL_PUBLIC_API` is written to the file (created when missing) from the client's
 * own setting, when it has one; other variables come from elsewhere, named in the hint.
 */
async function envCheck(root: string, config: ProjectConfig, options: DoctorOptions, keep: (values: Record<string, string>) => void): Promise<Outcome> {
  const path = join(root, config.env.file);
  const check = async () => {
    const { values } = await checkEnv(root, config);
    keep(values);
  };
  try {
    await check();
    return { status: 'ok', detail: config.env.required.length ? `${config.env.required.join(', ')} set` : `${config.env.file} needs nothing` };
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    const current = await readEnvValues(path).catch(() => undefined);
    const known = options.fix && config.env.required.includes('BASE_URL_PUBLIC_API') && !current?.['BASE_URL_PUBLIC_API'] ? await resolveBaseUrl(options.profile).catch(() => undefined) : undefined;
    if (!known) throw missingVariable(error, config);
    await updateEnvFile(path, [{ key: 'BASE_URL_PUBLIC_API', value: known, comment: 'The platform the app calls' }], { onlyMissing: true });
    const wrote = `wrote BASE_URL_PUBLIC_API=${known} to ${config.env.file}`;
    try {
      await check();
      return { status: 'fixed', detail: wrote };
    } catch (still) {
      if (!(still instanceof CliError)) throw still;
      const failure = missingVariable(still, config);
      throw new Failed(still, `${failure.detail} (${wrote})`, failure.hint);
    }
  }
}

/** A missing variable's failure, with where its value comes from. */
function missingVariable(error: CliError, config: ProjectConfig): Failed {
  const name = /^(\w+) environment variable not set$/.exec(error.message)?.[1];
  const hint = !name
    ? error.suggestion
    : name.startsWith('SVC_IDP_')
      ? `run svc provision idp: it registers the app's sign-in client and writes ${name} to ${config.env.file}`
      : `set ${name} in ${config.env.file} or the environment${name === 'BASE_URL_PUBLIC_API' ? ' (svc doctor --fix writes the client\'s own address)' : ''}`;
  return new Failed(error, error.message, hint);
}

async function ignoredCheck(root: string, envFile: string, fix: boolean): Promise<Outcome> {
  const ignored = await gitIgnores(root, envFile);
  if (ignored === undefined) return { status: 'skip', detail: 'not a git repository (or git is not installed)' };
  if (ignored) return { status: 'ok', detail: `${envFile} is ignored by git` };
  if (!fix) return { status: 'warn', detail: `${envFile} holds secrets and is not ignored by git`, hint: `add ${envFile} to .gitignore (svc doctor --fix does)` };
  const gitignore = join(root, '.gitignore');
  const text = await readFile(gitignore, 'utf8').catch(() => '');
  await writeFile(gitignore, `${text}${text && !text.endsWith('\n') ? '\n' : ''}${envFile}\n`);
  return { status: 'fixed', detail: `added ${envFile} to .gitignore` };
}

/** The env file holds the app's client secret: readable by its owner only, as svc init writes it. */
async function envModeCheck(path: string, fix: boolean): Promise<Outcome> {
  const mode = await stat(path).then((s) => s.mode & 0o777, () => undefined);
  const name = basename(path);
  if (mode === undefined) return { status: 'skip', detail: `no ${name}` };
  if ((mode & 0o077) === 0) return { status: 'ok', detail: `${name} is readable by its owner only` };
  const octal = mode.toString(8).padStart(3, '0');
  if (!fix) return { status: 'warn', detail: `${name} has mode ${octal}: other users can read its secrets`, hint: 'svc doctor --fix makes it readable by its owner only (chmod 600)' };
  await chmod(path, 0o600);
  return { status: 'fixed', detail: `${name} was mode ${octal}, now 600` };
}

async function tokensFileCheck(fix: boolean): Promise<Outcome> {
  const path = tokensPath();
  let mode: number;
  try {
    mode = (await stat(path)).mode & 0o777;
  } catch {
    return { status: 'ok', detail: `no ${path} (${process.env['SVC_TOKEN'] ? 'SVC_TOKEN is used' : 'svc login writes it'})` };
  }
  if ((mode & 0o077) === 0) return { status: 'ok', detail: `${path} is readable by its owner only` };
  const octal = mode.toString(8).padStart(3, '0');
  if (!fix) throw new Failed(new CliError('E006', { details: `${path} has mode ${octal}` }), `${path} has mode ${octal}: other users can read the tokens`, 'svc doctor --fix makes it readable by its owner only (chmod 600)');
  await chmod(path, 0o600);
  return { status: 'fixed', detail: `${path} was mode ${octal}, now 600` };
}
