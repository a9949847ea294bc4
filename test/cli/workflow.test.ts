import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { startTestStack, type TestStack } from '../harness/stack.ts';
import { createTenantFixture, type TenantFixture } from '../harness/tenant-fixture.ts';
import { svc } from './svc.ts';

/** `svc workflow provision|status|readiness|request` against the platform: what provisioning writes is what chat runs. */
describe('svc workflow', { timeout: 180_000 }, () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let tenant: TenantFixture;
  let project: string;
  let env: Record<string, string>;

  const inProject = (args: string[], extra: Record<string, string> = {}) => svc(args, { ...env, ...extra }, undefined, project);
  /** The tenant's resources of a type whose data match `where`, as the data API lists them. */
  const stored = async (type: string, where: object) => {
    const page = await stack.request('GET', `/v4/data/resources/${tenant.id}/${type}?where=${encodeURIComponent(JSON.stringify(where))}`, { as: tenant.admin.email });
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    return page.body.data.map((r: any) => r.data);
  };

  beforeAll(async () => {
    // The team plan includes ai.chat, so that a provisioned workflow can answer.
    tenant = await createTenantFixture(sql, 'cli-workflow', { plan: 'team' });
    stack = await startTestStack({ devUsers: [...DEV_USERS, tenant.admin, tenant.member] });
    project = await mkdtemp(join(tmpdir(), 'svc-workflow-'));
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'helpdesk-app' }));
    await writeFile(join(project, '.env.local'), '# the app\nSVC_VERTICAL_KEY=helpdesk\n');
    env = { HOME: project, BASE_URL_PUBLIC_API: stack.url, SVC_TOKEN: await stack.token(tenant.admin.email), SVC_TENANT_ID: tenant.id };
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('refuses options it cannot use before any call', async () => {
    const offline = { BASE_URL_PUBLIC_API: 'http://127.0.0.1:9' };
    const cases: Array<[string[], number, string]> = [
      [['workflow', 'provision', 'support'], 2, 'Required field missing: --vertical'],
      [['workflow', 'provision', 'Support Desk', '--vertical', 'helpdesk'], 2, 'workflow key "Support Desk"'],
      [['workflow', 'provision', 'support', '--vertical', 'helpdesk', '--ai-model', 'x'], 2, '--ai-model configure the AI runtime: add --bind-ai-runtime'],
      [['workflow', 'provision', 'support', '--vertical', 'helpdesk', '--stage', 'Bad Stage'], 2, '--stage Bad Stage: the id must be'],
      [['workflow', 'provision', 'support', '--vertical', 'helpdesk', '--stage-env', 'novalue'], 2, '--stage-env novalue: expected KEY=stage-id'],
      [['workflow', 'provision', 'support', '--vertical', 'helpdesk', '--stage-prompt', 'intake'], 2, '--stage-prompt intake: expected stage=prompt'],
      [['workflow', 'provision', 'support', '--vertical', 'helpdesk', '--workflow-env-key', '1BAD'], 2, '--workflow-env-key 1BAD'],
      [['workflow', 'provision', 'support', '--vertical', 'helpdesk', '--usecase', 'Retail Shops'], 2, '--usecase Retail Shops'],
      [['workflow', 'provision', 'support', '--vertical', 'helpdesk', '--status', 'paused'], 2, "Invalid input: option '--status <status>' argument 'paused' is invalid"],
      [['workflow', 'status'], 2, 'Required field missing: <workflow-key>'],
    ];
    for (const [args, exitCode, message] of cases) {
      const refused = await inProject(args, offline);
      expect(refused.exitCode, args.join(' ')).toBe(exitCode);
      expect(refused.stderr, args.join(' ')).toContain(message);
    }
  });

  it('provisions a workflow and its product configuration; without a runtime chat needs an operator', async () => {
    const first = await inProject(['workflow', 'provision', 'support', '--vertical', 'helpdesk', '--format', 'json']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.json).toMatchObject({
      tenantId: tenant.id,
      workflowKey: 'support',
      status: 'active',
      resources: [
        { type: 'shared-workflow-config', action: 'created', version: 1 },
        { type: 'vertical-product-config', action: 'created', version: 1 },
      ],
      env: { SVC_WORKFLOW_SUPPORT: 'support' },
    });
    expect(await stored('shared-workflow-config', { workflowKey: 'support' })).toEqual([
      { workflowKey: 'support', vertical: 'helpdesk', usecase: 'generic', scopeKey: 'generic:support', status: 'active', env: { SVC_WORKFLOW_SUPPORT: 'support' } },
    ]);
    expect(await stored('vertical-product-config', { workflowKey: 'support' })).toEqual([{ vertical: 'helpdesk', workflowKey: 'support', status: 'active' }]);

    const status = await inProject(['workflow', 'status', 'support']);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^status\s+operator_required$/m);
    expect(status.stdout).toContain('it has no active shared-chatbot-config');
  });

  it('binds an AI runtime with stages, prompts and env keys, writes the env values, and chat answers', async () => {
    const args = [
      'workflow', 'provision', 'support',
      '--vertical', 'helpdesk',
      '--display-name', 'Support desk',
      '--usecase', 'retail',
      '--stage', 'intake:Intake desk',
      '--stage', 'answer',
      '--stage-env', 'SVC_STAGE_INTAKE=intake',
      '--stage-env', 'SVC_STAGE_ANSWER=answer',
      '--stage-prompt', 'intake=Ask for the order number.',
      '--workflow-env-key', 'SVC_SUPPORT_WORKFLOW',
      '--bind-ai-runtime',
      '--ai-profile-key', 'support-local',
      '--status', 'active',
      '--write-local-env',
      '--write-app-config',
      '--env', 'staging',
    ];
    const bound = await inProject([...args, '--format', 'json']);
    expect(bound.exitCode, bound.stderr).toBe(0);
    expect(bound.json.resources.map((r: any) => [r.type, r.action])).toEqual([
      ['shared-workflow-config', 'updated'],
      ['vertical-product-config', 'updated'],
      ['shared-ai-profile', 'created'],
      ['shared-chatbot-config', 'created'],
    ]);
    const env = { SVC_WORKFLOW_SUPPORT: 'support', SVC_SUPPORT_WORKFLOW: 'support', SVC_STAGE_INTAKE: 'intake', SVC_STAGE_ANSWER: 'answer' };
    expect(bound.json.env).toEqual(env);
    expect(await stored('shared-workflow-config', { workflowKey: 'support' })).toEqual([
      {
        workflowKey: 'support',
        displayName: 'Support desk',
        vertical: 'helpdesk',
        usecase: 'retail',
        scopeKey: 'retail:support',
        status: 'active',
        stages: [
          { id: 'intake', displayName: 'Intake desk', envKey: 'SVC_STAGE_INTAKE', prompt: 'Ask for the order number.' },
          { id: 'answer', envKey: 'SVC_STAGE_ANSWER' },
        ],
        env,
        aiProfileKey: 'support-local',
        label: 'helpdesk-app',
      },
    ]);
    expect(await stored('vertical-product-config', { workflowKey: 'support' })).toEqual([{ vertical: 'helpdesk', workflowKey: 'support', displayName: 'Support desk', status: 'active' }]);
    expect(await stored('shared-ai-profile', { profileKey: 'support-local' })).toEqual([{ profileKey: 'support-local', provider: 'local' }]);
    expect(await stored('shared-chatbot-config', { workflowKey: 'support' })).toEqual([{ workflowKey: 'support', aiProfileKey: 'support-local', status: 'active' }]);

    // .env.local keeps its own lines; the app's configuration (label: the project's name) holds the same values.
    const local = await readFile(join(project, '.env.local'), 'utf8');
    expect(local).toBe('# the app\nSVC_VERTICAL_KEY=helpdesk\nSVC_WORKFLOW_SUPPORT=support\nSVC_SUPPORT_WORKFLOW=support\nSVC_STAGE_INTAKE=intake\nSVC_STAGE_ANSWER=answer\n');
    expect(bound.json.appConfig).toMatchObject({ label: 'helpdesk-app', environment: 'staging' });
    const config = await stack.request('GET', `/v4/platform/config/${tenant.id}/helpdesk-app/staging`, { as: tenant.member.email });
    expect(Object.fromEntries(config.body.data.map((e: any) => [e.key, e.value]))).toEqual(env);

    // Chat can use it now.
    const status = await inProject(['workflow', 'status', 'support', '--tenant', tenant.slug, '--format', 'json']);
    expect(status.json).toMatchObject({ workflowKey: 'support', status: 'available', provider: 'local', displayName: 'Support desk', stages: ['intake', 'answer'] });
    const answered = await stack.request('POST', `/v4/ai/chat/${tenant.id}/support/intake`, { as: tenant.member.email, body: { message: 'Where is my parcel?' } });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(answered.body).toMatchObject({ workflowId: 'support', stage: 'intake', answer: expect.any(String) });

    // The same options again change nothing, in text too.
    const again = await inProject(args);
    expect(again.exitCode, again.stderr).toBe(0);
    for (const type of ['shared-workflow-config', 'vertical-product-config', 'shared-ai-profile', 'shared-chatbot-config']) {
      expect(again.stdout).toMatch(new RegExp(`^${type}\\s+unchanged\\s`, 'm'));
    }
    expect(again.stdout).toContain('.env.local: 0 of 4 value(s) written');
    expect(again.stdout).toContain('configuration helpdesk-app/staging: 0 of 4 value(s) written');
  });

  it('provisions a draft on another provider and scope, keeping what the options do not set', async () => {
    const draft = await inProject([
      'workflow', 'provision', 'faq', '--tenant', tenant.slug, '--vertical', 'helpdesk', '--status', 'draft', '--scope-key', 'custom:faq', '--label', 'faq-site',
      '--bind-ai-runtime', '--ai-provider', 'openai', '--ai-model', 'gpt-4o-mini', '--format', 'json',
    ]);
    expect(draft.exitCode, draft.stderr).toBe(0);
    expect(await stored('shared-workflow-config', { workflowKey: 'faq' })).toEqual([
      { workflowKey: 'faq', vertical: 'helpdesk', usecase: 'generic', scopeKey: 'custom:faq', status: 'draft', env: { SVC_WORKFLOW_FAQ: 'faq' }, aiProfileKey: 'faq', label: 'faq-site' },
    ]);
    expect(await stored('shared-ai-profile', { profileKey: 'faq' })).toEqual([{ profileKey: 'faq', provider: 'openai', model: 'gpt-4o-mini' }]);
    expect(await stored('shared-chatbot-config', { workflowKey: 'faq' })).toEqual([{ workflowKey: 'faq', aiProfileKey: 'faq', status: 'draft' }]);
    expect((await inProject(['workflow', 'status', 'faq', '--format', 'json'])).json).toMatchObject({ status: 'blocked', reason: 'workflow "faq" is a draft; set its status to active' });

    // Active now: the stored provider needs the OpenAI-compatible endpoint this platform lacks.
    const active = await inProject(['workflow', 'provision', 'faq', '--vertical', 'helpdesk', '--bind-ai-runtime', '--format', 'json']);
    expect(active.json.resources.find((r: any) => r.type === 'shared-ai-profile')).toMatchObject({ action: 'unchanged' });
    expect(await stored('shared-workflow-config', { workflowKey: 'faq' })).toEqual([
      { workflowKey: 'faq', vertical: 'helpdesk', usecase: 'generic', scopeKey: 'generic:faq', status: 'active', env: { SVC_WORKFLOW_FAQ: 'faq' }, aiProfileKey: 'faq', label: 'faq-site' },
    ]);
    expect((await inProject(['workflow', 'status', 'faq', '--format', 'json'])).json).toMatchObject({ status: 'operator_required', provider: 'openai', model: 'gpt-4o-mini' });

    // A stage option for a stage the workflow does not have is refused before anything is written.
    const unknown = await inProject(['workflow', 'provision', 'support', '--vertical', 'helpdesk', '--stage-env', 'SVC_X=review']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain('--stage-env names stage "review", which the workflow does not have (stages: intake, answer)');
    expect((await stored('shared-workflow-config', { workflowKey: 'support' }))[0].env).not.toHaveProperty('SVC_X');
  });

  it('reports readiness and records runtime requests for an operator', async () => {
    const some = await inProject(['workflow', 'readiness', 'support', 'faq', '--format', 'json']);
    expect(some.exitCode, some.stderr).toBe(0);
    expect(some.json).toMatchObject({ tenant: { id: tenant.id, slug: tenant.slug }, plan: 'team', ready: false });
    expect(some.json.workflows.map((w: any) => [w.workflowKey, w.status])).toEqual([
      ['support', 'available'],
      ['faq', 'operator_required'],
    ]);
    const ready = await inProject(['workflow', 'readiness', 'support', '--tenant', tenant.slug]);
    expect(ready.exitCode).toBe(0);
    expect(ready.stdout).toMatch(/^ready\s+yes$/m);
    expect(ready.stdout).toMatch(/^support\s+available\s+answers through the local provider$/m);
    const all = await inProject(['workflow', 'readiness', '--format', 'json']);
    expect(all.json.workflows.map((w: any) => w.workflowKey).sort()).toEqual(['faq', 'support']);

    const requested = await inProject(['workflow', 'request', 'faq', '--display-name', 'FAQ bot', '--reason', 'launch next week', '--format', 'json']);
    expect(requested.exitCode, requested.stderr).toBe(0);
    expect(requested.json).toMatchObject({ tenantId: tenant.id, workflowKey: 'faq', displayName: 'FAQ bot', reason: 'launch next week', state: 'pending' });
    const again = await inProject(['workflow', 'request', 'faq', '--tenant', tenant.slug]);
    expect(again.stderr).toContain(`Request ${requested.json.id} for faq is pending`);
    expect(again.stdout).toMatch(/^display name\s+FAQ bot$/m);
    const member = await inProject(['workflow', 'status', 'nothing-here', '--format', 'json'], { SVC_TOKEN: await stack.token(tenant.member.email) });
    expect(member.json).toMatchObject({ workflowKey: 'nothing-here', status: 'unsupported' });
  });
});
