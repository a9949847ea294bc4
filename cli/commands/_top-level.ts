import type { CommandUnknownOpts } from '@commander-js/extra-typings';

/** A top-level command as `svc --help` lists it, and how to load the module that defines it. */
export interface TopLevelCommand {
  /** The command's description: its module uses this one. */
  description: string;
  /** Its arguments as the list of commands shows them (`[name]`). */
  usage?: string;
  load: () => Promise<{ command: CommandUnknownOpts }>;
}

export type TopLevelName =
  | 'init'
  | 'dev'
  | 'resources'
  | 'types'
  | 'tenant'
  | 'user'
  | 'provision'
  | 'env'
  | 'workflow'
  | 'chat'
  | 'docs'
  | 'vertical'
  | 'publicapi'
  | 'verify'
  | 'agent'
  | 'template'
  | 'login'
  | 'whoami'
  | 'logout'
  | 'deploy'
  | 'blocks'
  | 'update'
  | 'doctor';

/**
 * The top-level commands, in the order `svc --help` lists them. A start loads only this table and
 * the module of the command it runs (or whose help it prints); `--describe` loads them all.
 */
export const TOP_LEVEL: Record<TopLevelName, TopLevelCommand> = {
  init: {
    description:
      'Scaffold an app: a small web app that signs users in through its own backend-for-frontend (authorization code ' +
      "with PKCE at the platform's identity provider, the token kept on the server) and lists the tenant's resources " +
      'over REST v3; with svc.config.ts, src/svc.config/object-types.ts, the manifest svc.project.json (app, company ' +
      'and child tenant, package profile), .env.local and the agent assets (AGENTS.md, .agents/). Then a git ' +
      'repository with a first commit (none inside an existing work tree) and `npm install`. When logged in, enrolls ' +
      'the app in the company tenant (or binds to the app it has under the same key) and evaluates the capabilities ' +
      'of the tenant the app runs in (a child tenant once it is provisioned); not logged in, the app is enrolled by a ' +
      'later `svc init --current-dir`. The app signs users in with its own client at the identity provider: `svc ' +
      'provision idp` registers it and writes SVC_IDP_CLIENT_ID and SVC_IDP_CLIENT_SECRET to .env.local.',
    usage: '[name]',
    load: () => import('./init.ts'),
  },
  dev: {
    description:
      "Run the app's dev server (the project's `dev` script, with PORT set). First, unless --skip-checks: the " +
      'variables svc.config.ts requires are set in .env.local or the environment (E002 names the first missing, E003 ' +
      'when .env.local is missing too), the platform at BASE_URL_PUBLIC_API answers GET /health (E201), the client is ' +
      'logged in (E101, E102; no call), and the port is free. E001 outside a project, E005 when svc.config.ts, ' +
      'svc.project.json or package.json (with a "dev" script) is missing or invalid. Ctrl-C stops the server and its ' +
      'processes (exit 0); a server that stops by itself passes on its exit code.',
    load: () => import('./dev.ts'),
  },
  resources: {
    description: "A tenant's resources: list, read, write, query, aggregate, search, batches, files and storage",
    load: () => import('./resources/index.ts'),
  },
  types: {
    description: "The project's object types: validate, compare, seed to a tenant, pull",
    load: () => import('./types/index.ts'),
  },
  tenant: {
    description: 'Your tenants and the active one; create and delete tenants',
    load: () => import('./tenant/index.ts'),
  },
  user: {
    description: 'Users of a tenant: invite, remove; join as invited, or decline',
    load: () => import('./user/index.ts'),
  },
  provision: {
    description: "Provision what a tenant and its app need: the app's identity-provider registration, storage",
    load: () => import('./provision/index.ts'),
  },
  env: {
    description: "The project's .env.local and the app's configuration in the platform's store: list, pull, push",
    load: () => import('./env/index.ts'),
  },
  workflow: {
    description:
      "Workflows: provision their configuration, check their runtime status and the tenant's readiness, request a " +
      'runtime binding',
    load: () => import('./workflow/index.ts'),
  },
  chat: {
    description: "Chat with a workflow's stage in the active tenant: one answer, or the answer streamed as it is written",
    load: () => import('./chat/index.ts'),
  },
  docs: {
    description: "The tenant's documents: upload, classify, and index for retrieval",
    load: () => import('./docs.ts'),
  },
  vertical: {
    description:
      'Apps (vertical enrollments) of the company tenant: list, create, select for the project, provision their ' +
      'storage',
    load: () => import('./vertical/index.ts'),
  },
  publicapi: {
    description: 'Call any allowed /v4/ path with your token (the platform still authorizes it)',
    load: () => import('./publicapi/index.ts'),
  },
  verify: {
    description:
      "Check the platform's health, the object types and the tenant's schema (read-only); see also verify storage and " +
      'verify calls',
    load: () => import('./verify/index.ts'),
  },
  agent: {
    description: "The project's agent assets: instructions for coding assistants working in the app",
    load: () => import('./agent/index.ts'),
  },
  template: {
    description: "The project's scaffold files against the client's template",
    load: () => import('./template/index.ts'),
  },
  login: {
    description:
      'Log in through the browser (authorization code with PKCE), or with a code entered on another device where no ' +
      'browser can open here (SSH, no display), and save the tokens to ~/.svc/tokens.json',
    load: () => import('./login.ts'),
  },
  whoami: {
    description: 'Show the login status, active tenant, profile and token expiry (no API call)',
    load: () => import('./whoami.ts'),
  },
  logout: {
    description: 'Revoke the saved tokens at the identity provider, then delete the tokens file and clear the tenant context',
    load: () => import('./logout.ts'),
  },
  deploy: {
    description:
      "Deploy through the code host's Actions API (SVC_CODE_HOST_URL, GITHUB_TOKEN): repository secrets, workflow " +
      'dispatch, runs; no platform call',
    load: () => import('./deploy/index.ts'),
  },
  blocks: {
    description:
      "The platform's building blocks (catalog that ships with the client, and a project's own in svc.blocks.json): " +
      "list, describe, readiness per package profile, the manifest's JSON Schema, validation",
    load: () => import('./blocks/index.ts'),
  },
  update: {
    description:
      'Check for a newer release of the client and install it. Reads the release registry over the npm registry ' +
      'protocol: `GET <registry>/<package>` and its `dist-tags.latest`, where the registry is SVC_REGISTRY_URL, else ' +
      "npm's registry setting (the client's scope's, then `registry`). A newer release is installed with npm where " +
      'the client is installed (`npm install -g` into the same prefix, or into the project that depends on it); a ' +
      'client run from a source checkout is not updated (E305). E201 when the registry does not answer, E202 when it ' +
      'has no such package.',
    load: () => import('./update.ts'),
  },
  doctor: {
    description:
      'Check the project and the client, one line per check, every check run: the project (E001 outside one), its ' +
      "scaffold files against the client's template (a missing one fails, outdated or edited ones warn), its " +
      'structure (svc.config.ts, svc.project.json, package.json with a "dev" script; E005), svc.config.ts loads ' +
      '(E006), the variables it requires are set in .env.local or the environment (E003, E002), .env.local is ignored ' +
      'by git and readable by its owner only, the object types are valid (E004, E301), the platform answers GET ' +
      '/health (E201), the client is logged in and its token accepted (GET /v4/identity/me; E101, E102, E103), and ' +
      '~/.svc/tokens.json is readable by its owner only (E006). --fix repairs what can be repaired on this machine; ' +
      '--check-updates also reads the release registry as svc update --check does. Plain text; exit 9 when a check ' +
      'failed.',
    load: () => import('./doctor.ts'),
  },
};
