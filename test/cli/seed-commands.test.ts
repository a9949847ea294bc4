import { beforeAll, describe, expect, it } from 'vitest';
import { svc } from './svc.ts';

/**
 * Seed 002's command tables, as written there: each command with its arguments, and each option
 * with the default the seed gives it in parentheses (`undefined` where it gives none, or describes
 * one in words that the option's help states instead: "generated UUID", "kebab-case of name"), and
 * the options it calls required. Every option listed must exist under its name with that default;
 * options and defaults the client adds where the seed is silent are not checked here.
 */
const SEED: Array<{ command: string; args?: string; options: Record<string, unknown>; required?: string[] }> = [
  {
    command: 'init',
    args: '[name]',
    options: {
      '--from': undefined, '--skip-prompts': undefined, '--current-dir': undefined, '--company-tenant': undefined, '--tenant': undefined,
      '--parent-tenant': undefined, '--child-tenant': undefined, '--create-child-tenant': undefined, '--no-agent': undefined, '--package-profile': 'external',
    },
  },
  { command: 'dev', options: { '--port': 3000, '--turbo': true, '--no-turbo': undefined, '--skip-checks': undefined } },
  { command: 'logout', options: {} },
  { command: 'whoami', options: {} },
  { command: 'env list', options: { '--show-secrets': undefined, '--format': 'text' } },
  { command: 'env pull', options: { '--env': 'dev', '--label': undefined, '--include-secrets': undefined } },
  { command: 'env push', options: { '--label': undefined, '--key': undefined } },
  { command: 'types validate', options: {} },
  { command: 'agent refresh', options: { '--check': undefined, '--force': undefined, '--format': 'text' } },
  { command: 'template check', options: { '--format': 'text' } },
  { command: 'update', options: { '--check': undefined } },
  { command: 'doctor', options: { '--fix': undefined, '--check-updates': undefined } },
  { command: 'login', options: { '--tenant-name': undefined, '--tenant-id': undefined, '--scope': undefined, '--callback-port': undefined } },
  { command: 'provision idp', options: { '--force': undefined, '--rotate-secret': undefined, '--debug': undefined } },
  { command: 'provision storage', options: { '--tenant-id': undefined, '--backend': 'all', '--dry-run': undefined, '--rebuild-search': undefined, '--format': 'text' } },
  { command: 'tenant list', options: { '--parent': undefined, '--all': undefined, '--debug': undefined, '--raw-user': undefined, '--format': 'text' } },
  { command: 'tenant select', args: '[tenant]', options: {} },
  { command: 'tenant info', args: '<id>', options: { '--format': 'text' } },
  {
    command: 'tenant create',
    options: {
      '--name': undefined, '--slug': undefined, '--parent': undefined, '--domain': undefined, '--usecase': 'generic', '--industry': undefined,
      '--starter-template': 'blank-vertical-template', '--home-region': undefined, '--allow-root': undefined, '--format': 'text',
    },
    required: ['--name', '--slug'],
  },
  { command: 'tenant delete', args: '<id>', options: { '--force': undefined, '--format': 'text' } },
  { command: 'user invite', options: { '--email': undefined, '--tenant': undefined } },
  { command: 'user provision-me', options: { '--tenant': undefined } },
  { command: 'types seed', options: { '--env': 'dev', '--tenant-key': undefined, '--tenant-id': undefined, '--dry-run': undefined, '--format': 'text' } },
  { command: 'types diff', options: { '--tenant-key': undefined, '--tenant-id': undefined } },
  { command: 'types pull', options: { '--tenant-id': undefined, '--output': 'src/svc.config/object-types.generated.ts' } },
  {
    command: 'resources list',
    args: '<type>',
    options: { '--tenant-id': undefined, '--page': 1, '--limit': 20, '--sort': '-created_at', '--where': undefined, '--cursor': undefined, '--format': 'text' },
  },
  { command: 'resources get', args: '<type> <id>', options: { '--tenant-id': undefined, '--format': 'text' } },
  { command: 'resources create', args: '<type>', options: { '--tenant-id': undefined, '--data': undefined, '--file': undefined, '--format': 'text' } },
  { command: 'resources update', args: '<type> <id>', options: { '--tenant-id': undefined, '--data': undefined, '--version': undefined, '--format': 'text' } },
  { command: 'resources delete', args: '<type> <id>', options: { '--tenant-id': undefined, '--force': undefined, '--format': 'text' } },
  { command: 'resources query', options: { '--tenant-id': undefined, '--types': undefined, '--where': undefined, '--limit': 20, '--format': 'text' }, required: ['--types'] },
  {
    command: 'resources aggregate',
    args: '<type>',
    options: { '--tenant-id': undefined, '--group-by': undefined, '--metrics': undefined, '--where': undefined, '--limit': 1000, '--format': 'text' },
    required: ['--group-by', '--metrics'],
  },
  {
    command: 'resources search',
    args: '<query>',
    options: { '--tenant-id': undefined, '--types': undefined, '--mode': 'hybrid', '--hybrid': undefined, '--vector': undefined, '--fulltext': undefined, '--limit': 10, '--format': 'text' },
  },
  { command: 'resources schema', options: { '--tenant-id': undefined, '--format': 'text' } },
  ...['batch-create', 'batch-update'].map((verb) => ({
    command: `resources ${verb}`,
    args: '<type>',
    options: { '--tenant-id': undefined, '--data': undefined, '--file': undefined, '--format': 'text' },
  })),
  { command: 'resources batch-delete', args: '<type>', options: { '--tenant-id': undefined, '--data': undefined, '--file': undefined, '--ids': undefined, '--format': 'text' } },
  { command: 'resources file upload', args: '<type> <id> <property> <path>', options: { '--tenant-id': undefined, '--format': 'text' } },
  { command: 'resources file get', args: '<type> <id> <property>', options: { '--tenant-id': undefined, '--output': undefined, '--format': 'text' } },
  { command: 'resources file delete', args: '<type> <id> <property>', options: { '--tenant-id': undefined, '--force': undefined, '--format': 'text' } },
  ...['resources storage status', 'resources storage doctor', 'resources doctor'].map((command) => ({ command, options: { '--tenant-id': undefined, '--format': 'text' } })),
  { command: 'resources sync-schema', options: { '--tenant-id': undefined, '--backend': undefined, '--dry-run': undefined, '--format': 'text' } },
  ...['send', 'stream'].map((verb) => ({
    command: `chat ${verb}`,
    args: '<message>',
    options: { '--workflow': undefined, '--stage': 'chat', '--conversation-id': undefined },
    required: ['--workflow'],
  })),
  {
    command: 'workflow provision',
    args: '<workflow-key>',
    options: {
      '--vertical': undefined, '--tenant': undefined, '--display-name': undefined, '--usecase': 'generic', '--scope-key': undefined,
      '--stage': [], '--stage-env': [], '--stage-prompt': [], '--workflow-env-key': undefined, '--bind-ai-runtime': undefined, '--ai-provider': undefined,
      '--ai-model': undefined, '--ai-profile-key': undefined, '--status': 'active', '--write-local-env': undefined, '--write-app-config': undefined,
      '--env': 'dev', '--label': undefined, '--format': 'text',
    },
    required: ['--vertical'],
  },
  { command: 'workflow readiness', args: '[workflow-keys...]', options: { '--tenant': undefined, '--format': 'text' } },
  { command: 'workflow status', args: '<workflow-key>', options: { '--tenant': undefined, '--format': 'text' } },
  { command: 'workflow request', args: '<workflow-key>', options: { '--tenant': undefined, '--display-name': undefined, '--reason': undefined, '--format': 'text' } },
  { command: 'docs upload', args: '<file>', options: {} },
  { command: 'docs classify', args: '<file>', options: {} },
  { command: 'docs index', args: '<id>', options: {} },
  ...['get', 'post', 'patch', 'put', 'delete'].map((verb) => ({
    command: `publicapi ${verb}`,
    args: '<path>',
    options: { '--tenant-id': undefined, '--data': undefined, '--file': undefined, '--param': [], '--include-headers': undefined, '--format': 'text', '--json': undefined },
  })),
  { command: 'deploy setup', options: { '--repo': undefined } },
  { command: 'deploy trigger', options: { '--repo': undefined, '--branch': 'main', '--workflow': 'deploy-demo.yml', '--format': 'text' } },
  { command: 'deploy status', options: { '--repo': undefined, '--format': 'text' } },
  {
    command: 'blocks list',
    options: { '--lane': undefined, '--coupling': undefined, '--readiness': undefined, '--package-profile': undefined, '--custom': undefined, '--group-by': 'lane', '--format': 'text' },
  },
  { command: 'blocks describe', args: '<block-id>', options: { '--format': 'text' } },
  { command: 'blocks readiness', options: { '--package-profile': undefined, '--format': 'text' } },
  { command: 'blocks schema', options: { '--format': 'json' } },
  { command: 'blocks validate', options: { '--file': undefined, '--strict': undefined, '--format': 'text' } },
  { command: 'vertical list', options: { '--tenant-id': undefined, '--limit': 50, '--format': 'text' } },
  {
    command: 'vertical create',
    args: '<name>',
    options: {
      '--tenant-id': undefined, '--parent-tenant': undefined, '--child-tenant': undefined, '--child-tenant-slug': undefined, '--key': undefined,
      '--template': undefined, '--source': 'svc-cli', '--app-url': undefined, '--status': 'pending', '--format': 'text',
    },
  },
  { command: 'vertical select', args: '<key>', options: { '--tenant-id': undefined, '--skip-validate': undefined, '--format': 'text' } },
  {
    command: 'vertical provision',
    args: '<key>',
    options: { '--tenant-id': undefined, '--backend': 'all', '--dry-run': undefined, '--rebuild-search': undefined, '--skip-validate': undefined, '--select': undefined, '--format': 'text' },
  },
  { command: 'verify', options: { '--tenant-id': undefined } },
  { command: 'verify storage', options: { '--tenant-id': undefined, '--format': 'text' } },
  {
    command: 'verify calls',
    options: {
      '--tenant-id': undefined, '--resource-type': undefined, '--resource-id': undefined, '--workflow': undefined, '--stage': 'chat', '--tenant-record': undefined,
      '--user-email': undefined, '--include-chat': undefined, '--chat-message': undefined, '--format': 'text',
    },
  },
];

/** Choices the seed writes as `<a|b|c>`, by command and option. */
const CHOICES: Array<[command: string, option: string, choices: string[]]> = [
  ['init', '--package-profile', ['external', 'internal', 'hybrid']],
  ['provision storage', '--backend', ['postgresql', 'mongodb', 'documentdb', 'blob', 'search', 'all']],
  ['tenant create', '--usecase', ['council', 'retail', 'healthcare', 'finance', 'manufacturing', 'generic']],
  ['tenant create', '--home-region', ['au', 'ca', 'eu']],
  ['resources search', '--mode', ['fulltext', 'hybrid', 'vector']],
  ['resources sync-schema', '--backend', ['postgresql', 'documentdb', 'blob', 'search']],
  ['workflow provision', '--status', ['active', 'draft']],
  ['blocks list', '--lane', ['foundation', 'product', 'addon', 'dev']],
  ['blocks list', '--coupling', ['external-safe', 'external-with-adapter', 'internal-only']],
  ['blocks list', '--readiness', ['public-ready', 'preview', 'internal', 'blocked']],
  ['blocks list', '--package-profile', ['external', 'internal', 'hybrid']],
  ['blocks list', '--group-by', ['lane', 'package', 'coupling', 'profile', 'readiness']],
];

interface DescribedOption {
  flags: string;
  default?: unknown;
  required?: boolean;
  choices?: string[];
}
interface DescribedCommand {
  path: string;
  arguments: Array<{ name: string; required: boolean; variadic: boolean }>;
  options: DescribedOption[];
  commands?: DescribedCommand[];
}

const longFlag = (flags: string) => flags.split(/[ ,]+/).find((part) => part.startsWith('--'))!;
const writtenArgs = (command: DescribedCommand) =>
  command.arguments.map((a) => (a.required ? `<${a.name}${a.variadic ? '...' : ''}>` : `[${a.name}${a.variadic ? '...' : ''}]`)).join(' ');

/** Every command, argument, option, default and choice of seed 002, in the client's command tree (`--describe`, from which help is made). */
describe('seed 002 in the command tree', () => {
  const commands = new Map<string, DescribedCommand>();
  let tree: any;

  beforeAll(async () => {
    const described = await svc(['--describe']);
    expect(described.exitCode, described.stderr).toBe(0);
    tree = described.json;
    const walk = (list: DescribedCommand[]) => {
      for (const command of list) {
        commands.set(command.path, command);
        walk(command.commands ?? []);
      }
    };
    walk(tree.commands);
  });

  it('has the global flags', () => {
    expect(tree.globalOptions.map((o: DescribedOption) => o.flags)).toEqual(
      expect.arrayContaining(['-V, --version', '--simple', '--no-color', '--color', '--profile <name>', '--describe']),
    );
  });

  it.each(SEED.map((entry) => [entry.command, entry] as const))('%s', (_, entry) => {
    const command = commands.get(entry.command);
    expect(command, `no command ${entry.command}`).toBeDefined();
    expect(writtenArgs(command!)).toBe(entry.args ?? '');
    const options = new Map(command!.options.map((o) => [longFlag(o.flags), o]));
    for (const [flag, value] of Object.entries(entry.options)) {
      const option = options.get(flag);
      expect(option, `${entry.command} has no ${flag}`).toBeDefined();
      if (value !== undefined) expect(option!.default, `${entry.command} ${flag}'s default`).toEqual(value);
      if (entry.required?.includes(flag)) expect(option!.required, `${entry.command} ${flag} required`).toBe(true);
      if (flag === '--format') expect(option!.choices).toEqual(['text', 'json']);
    }
  });

  it('takes exactly the choices the seed lists', () => {
    for (const [path, flag, choices] of CHOICES) {
      const option = commands.get(path)!.options.find((o) => longFlag(o.flags) === flag);
      expect(option?.choices, `${path} ${flag}`).toEqual(choices);
    }
  });
});
