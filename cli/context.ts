import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { DEFAULT_PROFILE, readTenantContext, readTokens, resolveBaseUrl } from './config.ts';
import { CliError } from './errors.ts';
import { FORMATS, Output, type Format } from './output.ts';
import type { ApiClient } from './services/api-client.ts';

/** What every command gets: its output, the profile, and (on demand) the API client and tenant. */
export interface CommandContext {
  out: Output;
  profile: string;
  /** The v4 client of the profile: base URL and bearer token resolved on first use. */
  api(): Promise<ApiClient>;
  /** `--tenant-id` when given, else `SVC_TENANT_ID`, else the tenant chosen with `tenant select`. */
  tenantId(explicit?: string): Promise<string>;
}

interface GlobalOptions {
  simple?: boolean;
  color?: boolean;
  input?: boolean;
  profile?: string;
  format?: string;
  json?: boolean;
  debug?: boolean;
}

/** The output format of a command's options: `--format`, or the deprecated `--json` (noted on stderr). */
export function formatOf(options: GlobalOptions): Format {
  if (options.json) {
    process.stderr.write('Warning: --json is deprecated; use --format json\n');
    return 'json';
  }
  const format = options.format ?? 'text';
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw new CliError('E304', { details: `--format ${format}`, validFormats: FORMATS.join(', ') });
  }
  return format as Format;
}

const contexts = new WeakMap<CommandUnknownOpts, CommandContext>();
let latest: CommandContext | undefined;

/** The context of the running command (made once per command), from its options and the program's. */
export function contextOf(command: CommandUnknownOpts): CommandContext {
  let context = contexts.get(command);
  if (!context) {
    context = createContext(command);
    contexts.set(command, context);
    latest = context;
  }
  return context;
}

/** The context of the command that ran last, if one got that far (for rendering its failure). */
export const latestContext = () => latest;

/**
 * The options of a command and its ancestors. A value given on the command line beats a default
 * and the nearest command's beats its parents'; commander's `optsWithGlobals` lets a parent's
 * default win (`svc resources delete --no-input` still prompted: the program's `input` default is true).
 */
export function mergedOptions(command: CommandUnknownOpts): Record<string, unknown> {
  const chain: CommandUnknownOpts[] = [];
  for (let c: CommandUnknownOpts | null = command; c; c = c.parent) chain.unshift(c);
  const merged: Record<string, unknown> = {};
  for (const c of chain) {
    for (const [key, value] of Object.entries(c.opts())) {
      if (key in merged && c.getOptionValueSource(key) === 'default') continue;
      merged[key] = value;
    }
  }
  return merged;
}

function createContext(command: CommandUnknownOpts): CommandContext {
  const options = mergedOptions(command) as GlobalOptions;
  const profile = options.profile ?? process.env['SVC_PROFILE'] ?? DEFAULT_PROFILE;
  const out = new Output({ format: formatOf(options), color: options.color, simple: options.simple === true, input: options.input });
  let client: Promise<ApiClient> | undefined;
  const context: CommandContext = {
    out,
    profile,
    api: () =>
      (client ??= (async () => {
        const { createApiClient } = await import('./services/api-client.ts');
        const { needsRefresh, refreshTokens } = await import('./services/login.service.ts');
        const baseUrl = await resolveBaseUrl(profile);
        if (!baseUrl) throw new CliError('E002', { var: 'BASE_URL_PUBLIC_API' });
        let token = process.env['SVC_TOKEN'] || undefined;
        if (!token) {
          const stored = await readTokens(profile);
          if (stored.looseMode) out.warn('~/.svc/tokens.json is readable by other users: chmod 600 it');
          const tokens = stored.tokens && needsRefresh(stored.tokens) ? await refreshTokens({ baseUrl, profile, tokens: stored.tokens }) : stored.tokens;
          token = tokens?.accessToken;
        }
        const debug = options.debug ? (line: string) => out.info(out.errColors.dim(line)) : undefined;
        return createApiClient({ baseUrl, token, debug });
      })()),
    async tenantId(explicit) {
      if (explicit) return explicit;
      const fromEnv = process.env['SVC_TENANT_ID'];
      if (fromEnv) return fromEnv;
      const selected = await readTenantContext(profile);
      if (selected) return selected.tenantId;
      throw new CliError('E002', { var: 'SVC_TENANT_ID' });
    },
  };
  return context;
}
