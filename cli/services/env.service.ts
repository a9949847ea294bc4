import { relative } from 'node:path';
import { CliError, invalidInput } from '../errors.ts';
import type { ApiClient } from './api-client.ts';
import { entriesOf, envFilePath, readEnvFile, updateEnvFile, type EnvChange } from './env-file.ts';

/** What `env list` shows for a secret's value unless `--show-secrets`. */
export { MASK } from './env.constants.ts';

/** An entry of the platform's configuration store. */
export interface ConfigEntry {
  key: string;
  value: string | null;
  secret: boolean;
  version: number;
  created_at: string;
  updated_at: string;
  updated_by: string | null;
}

export interface ConfigSet {
  tenant_id: string;
  label: string;
  environment: string;
  secrets_included: boolean;
  data: ConfigEntry[];
}

export interface ConfigWriteOutcome {
  tenant_id: string;
  label: string;
  environment: string;
  changes: Array<{ key: string; action: 'created' | 'updated' | 'unchanged' | 'deleted'; secret: boolean; version: number | null }>;
}

/** Names one configuration set: the tenant, the app's label, the environment. */
export interface SetRef {
  tenantId: string;
  label: string;
  environment: string;
}

/** The names the store takes. */
const STORABLE_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

const setPath = (set: SetRef) => `/v4/platform/config/${[set.tenantId, set.label, set.environment].map(encodeURIComponent).join('/')}`;

/** The configuration store the platform serves (`/v4/platform/config`). */
export function createConfigStore(api: ApiClient) {
  return {
    async get(set: SetRef, includeSecrets: boolean): Promise<ConfigSet> {
      const query = includeSecrets ? { include_secrets: 'true' } : {};
      return (await api.request<ConfigSet>('GET', setPath(set), { query, subject: `Configuration ${set.label}/${set.environment}` })).body;
    },

    /** Sets the entries, all or none; `secret` undefined keeps what the store holds. */
    async write(set: SetRef, entries: Array<{ key: string; value: string; secret?: boolean }>): Promise<ConfigWriteOutcome> {
      return (await api.request<ConfigWriteOutcome>('PATCH', setPath(set), { body: { entries }, subject: `Configuration ${set.label}/${set.environment}` })).body;
    },
  };
}

export interface EnvListing {
  file: string;
  secretsShown: boolean;
  /** A secret's value is null unless shown. */
  entries: Array<{ key: string; value: string | null; secret: boolean }>;
}

export interface PullResult {
  file: string;
  tenantId: string;
  label: string;
  environment: string;
  secretsIncluded: boolean;
  changes: EnvChange[];
  /** Secrets of the store left out (and left as they are locally) without `--include-secrets`. */
  skippedSecrets: string[];
}

export interface PushResult extends ConfigWriteOutcome {
  file: string;
}

/** A path as the user would type it from the current directory. */
const shown = (path: string) => relative(process.cwd(), path) || path;

async function existingEnvFile() {
  const path = await envFilePath();
  const file = await readEnvFile(path);
  if (!file.exists) throw new CliError('E003', { file: shown(path) });
  return file;
}

/** `.env.local` and the platform's configuration store: list locally, pull from and push to the store. */
export function createEnvService() {
  return {
    /** The project's `.env.local`, secrets' values masked unless `showSecrets`; no platform call. */
    async list(showSecrets: boolean): Promise<EnvListing> {
      const file = await existingEnvFile();
      const entries = entriesOf(file).map((e) => ({ key: e.key, value: e.secret && !showSecrets ? null : e.value, secret: e.secret }));
      return { file: shown(file.path), secretsShown: showSecrets, entries };
    },

    /**
     * Writes the store's entries of the set into `.env.local`: values that differ are changed
     * where they stand, new keys added at the end, everything else kept. Secrets only with
     * `includeSecrets` (marked `# svc:secret`); without it the local values of secrets stay.
     */
    async pull(api: ApiClient, set: SetRef, includeSecrets: boolean): Promise<PullResult> {
      const path = await envFilePath();
      const stored = await createConfigStore(api).get(set, includeSecrets);
      const writable = stored.data.filter((e) => e.value !== null);
      const changes = await updateEnvFile(
        path,
        writable.map((e) => ({ key: e.key, value: e.value!, secret: e.secret })),
      );
      return {
        file: shown(path),
        tenantId: stored.tenant_id,
        label: stored.label,
        environment: stored.environment,
        secretsIncluded: stored.secrets_included,
        changes,
        skippedSecrets: stored.data.filter((e) => e.value === null).map((e) => e.key),
      };
    },

    /**
     * Stores `.env.local`'s entries (or only `key`) in the set, all or none. An entry marked
     * `# svc:secret` or named like a secret is stored as a secret; any other keeps the store's flag
     * (not a secret when new).
     */
    async push(api: ApiClient, set: SetRef, key?: string): Promise<PushResult> {
      const file = await existingEnvFile();
      let entries = entriesOf(file);
      if (key !== undefined) {
        entries = entries.filter((e) => e.key === key);
        if (!entries.length) throw new CliError('E202', { resource: `Key ${key} in ${shown(file.path)}` });
      }
      if (!entries.length) throw invalidInput(`${shown(file.path)} has no entries to push`);
      const unstorable = entries.filter((e) => !STORABLE_KEY.test(e.key)).map((e) => e.key);
      if (unstorable.length) throw invalidInput(`${unstorable.join(', ')}: the store takes names of letters, digits and "_" (not starting with a digit), at most 128 characters`);
      const outcome = await createConfigStore(api).write(
        set,
        entries.map((e) => ({ key: e.key, value: e.value, ...(e.secret ? { secret: true } : {}) })),
      );
      return { file: shown(file.path), ...outcome };
    },
  };
}
