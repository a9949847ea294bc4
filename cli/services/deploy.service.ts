import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { assertSecureUrl } from '../config.ts';
import { CliError, invalidInput } from '../errors.ts';
import { createApiClient, type ApiClient } from './api-client.ts';
import { readEnvValues } from './env-file.ts';
import { loadProjectConfig, requireProjectRoot } from './project.service.ts';

/**
 * Deploys through a code host's REST API, as GitHub documents its Actions API: repository
 * secrets (sealed with the repository's public key, libsodium's sealed box), workflow dispatches
 * and workflow runs. The API's address is SVC_CODE_HOST_URL (default GitHub's; a GitHub
 * Enterprise server's is `https://<host>/api/v3`), the token GITHUB_TOKEN (else GH_TOKEN). No call
 * goes to the platform.
 */

export const DEFAULT_CODE_HOST_URL = 'https://api.github.com';
const REPO = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/;
/** What the code host accepts as a secret's name: letters, digits and underscores, not starting with a digit or GITHUB_. */
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface Repository {
  owner: string;
  name: string;
  /** `owner/name`. */
  fullName: string;
}

function parseRepo(value: string, from: string): Repository {
  const match = REPO.exec(value);
  if (!match) throw invalidInput(`${from} must be owner/name, not "${value}"`);
  return { owner: match[1]!, name: match[2]!, fullName: value };
}

/** `owner/name` from the `origin` remote of the git repository around `cwd` (`git@host:owner/name.git`, `https://host/owner/name`). */
function originRepo(cwd: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('git', ['remote', 'get-url', 'origin'], { cwd, timeout: 10_000 }, (error, stdout) => {
      const match = error ? null : /[:/]([^/:\s]+)\/([^/\s]+?)(?:\.git)?\/?$/.exec(stdout.trim());
      resolve(match ? `${match[1]}/${match[2]}` : undefined);
    });
  });
}

/** `--repo`, else the `origin` remote of the current folder's git repository; E303 naming --repo when neither gives one. */
export async function resolveRepo(option: string | undefined, cwd = process.cwd()): Promise<Repository> {
  if (option !== undefined) return parseRepo(option, '--repo');
  const fromOrigin = await originRepo(cwd);
  if (!fromOrigin) throw new CliError('E303', { field: '--repo' });
  return parseRepo(fromOrigin, "the git remote origin's repository");
}

/** The code host's API client: its address (https unless this machine) and token; E002 without a token. */
export function codeHostClient(): ApiClient {
  const baseUrl = (process.env['SVC_CODE_HOST_URL'] || DEFAULT_CODE_HOST_URL).replace(/\/+$/, '');
  assertSecureUrl(baseUrl, 'SVC_CODE_HOST_URL');
  const token = process.env['GITHUB_TOKEN'] || process.env['GH_TOKEN'];
  if (!token) throw new CliError('E002', { var: 'GITHUB_TOKEN' });
  const api = createApiClient({ baseUrl, token });
  const headers = { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', 'user-agent': 'svc-cli' };
  return { baseUrl, request: (method, path, options = {}) => api.request(method, path, { ...options, headers: { ...headers, ...options.headers } }) };
}

const repoPath = (repo: Repository) => `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.name)}`;

/** A value sealed for the repository's public key (base64), as the code host's secrets API requires. */
export async function sealSecret(value: string, publicKeyBase64: string): Promise<string> {
  const { default: sodium } = await import('libsodium-wrappers');
  await sodium.ready;
  const key = sodium.from_base64(publicKeyBase64, sodium.base64_variants.ORIGINAL);
  return sodium.to_base64(sodium.crypto_box_seal(sodium.from_string(value), key), sodium.base64_variants.ORIGINAL);
}

export interface SetupResult {
  repo: string;
  /** The env file the values came from. */
  envFile: string;
  secrets: Array<{ name: string; action: 'created' | 'updated' }>;
  skipped: Array<{ name: string; reason: string }>;
  /** Values that name this machine: the deployed app cannot reach them. */
  localValues: string[];
}

/**
 * Sets the project's variables (every one with a value in its env file, `.env.local`) as secrets of
 * the repository: each value sealed with the repository's public key, then `PUT` by name
 * (created, or updated when it exists). Names the code host refuses are skipped, saying why.
 * E001 outside a project, E003 without its env file.
 */
export async function setupSecrets(api: ApiClient, repo: Repository): Promise<SetupResult> {
  const root = await requireProjectRoot();
  const config = await loadProjectConfig(root);
  const envFile = join(root, config.env.file);
  const values = await readEnvValues(envFile);
  if (!values) throw new CliError('E003', { file: config.env.file });
  const skipped: SetupResult['skipped'] = [];
  const wanted: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(values)) {
    if (!value) skipped.push({ name, reason: 'no value' });
    else if (!SECRET_NAME.test(name) || /^GITHUB_/i.test(name)) skipped.push({ name, reason: 'the code host refuses this name (letters, digits and _, not starting with a digit or GITHUB_)' });
    else wanted.push([name, value]);
  }
  if (!wanted.length) throw invalidInput(`${config.env.file} has no variable with a value to set as a secret`);
  const key = await api.request<{ key_id: string; key: string }>('GET', `${repoPath(repo)}/actions/secrets/public-key`, { subject: `Repository ${repo.fullName}` });
  const secrets: SetupResult['secrets'] = [];
  for (const [name, value] of wanted) {
    const encrypted = await sealSecret(value, key.body.key);
    const put = await api.request('PUT', `${repoPath(repo)}/actions/secrets/${encodeURIComponent(name)}`, {
      body: { encrypted_value: encrypted, key_id: key.body.key_id },
      subject: `Repository ${repo.fullName}`,
    });
    secrets.push({ name, action: put.status === 201 ? 'created' : 'updated' });
  }
  const localValues = wanted.filter(([, value]) => /^https?:\/\/(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?(\/|$)/.test(value)).map(([name]) => name);
  return { repo: repo.fullName, envFile, secrets, skipped, localValues };
}

export interface TriggerResult {
  repo: string;
  workflow: string;
  ref: string;
  dispatched: true;
}

/** Dispatches the workflow on the branch (`POST .../dispatches` with `{ref}`); E202 when the repository or workflow does not exist. */
export async function triggerWorkflow(api: ApiClient, repo: Repository, workflow: string, ref: string): Promise<TriggerResult> {
  if (!/^[\w.-]+$/.test(workflow)) throw invalidInput(`--workflow must be a workflow's file name (deploy-demo.yml) or id, not "${workflow}"`);
  await api.request('POST', `${repoPath(repo)}/actions/workflows/${encodeURIComponent(workflow)}/dispatches`, {
    body: { ref },
    subject: `Workflow ${workflow} of ${repo.fullName}`,
  });
  return { repo: repo.fullName, workflow, ref, dispatched: true };
}

export interface WorkflowRun {
  id: number;
  name: string;
  branch: string;
  event: string;
  /** queued, in_progress, completed, ... */
  status: string;
  /** success, failure, cancelled, ... once completed; null before. */
  conclusion: string | null;
  createdAt: string;
  url: string;
}

export interface RunsResult {
  repo: string;
  total: number;
  runs: WorkflowRun[];
}

interface CodeHostRun {
  id: number;
  name?: string;
  head_branch?: string;
  event?: string;
  status?: string;
  conclusion?: string | null;
  created_at?: string;
  html_url?: string;
}

/** The repository's latest workflow runs, newest first (`GET .../actions/runs`, 20 of them). */
export async function listRuns(api: ApiClient, repo: Repository): Promise<RunsResult> {
  const { body } = await api.request<{ total_count: number; workflow_runs: CodeHostRun[] }>('GET', `${repoPath(repo)}/actions/runs`, {
    query: { per_page: 20 },
    subject: `Repository ${repo.fullName}`,
  });
  return {
    repo: repo.fullName,
    total: body.total_count,
    runs: body.workflow_runs.map((run) => ({
      id: run.id,
      name: run.name ?? '',
      branch: run.head_branch ?? '',
      event: run.event ?? '',
      status: run.status ?? '',
      conclusion: run.conclusion ?? null,
      createdAt: run.created_at ?? '',
      url: run.html_url ?? '',
    })),
  };
}
