import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import {
  clientFlags,
  ensureSearchAttributes,
  ensureTemporalCli,
  ensureTemporalDevServer,
  runTemporalCli,
  type TemporalDevServer,
} from './temporal.ts';
import { isAlive } from './process.ts';
import { stateDir } from '../../control-plane/app/state-dir.ts';

const CHECK = { name: 'temporal-harness-check', port: 27233 } as const;
const UI_PORT = 28233;
const ATTRIBUTES = { TenantId: 'Keyword', WorkflowKey: 'Keyword' } as const;
const log = (msg: string) => process.stderr.write(`[${CHECK.name}] ${msg}\n`);

async function isListening(port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(true));
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () => probe.close(() => resolve(false)));
  });
}

describe('ensureTemporalDevServer', () => {
  let cli = '';
  let server: TemporalDevServer | undefined;
  let blocker: Server | undefined;

  afterAll(async () => {
    await server?.stop();
    blocker?.close();
  });

  it('finds or builds the temporal CLI', { timeout: 15 * 60_000 }, async () => {
    cli = await ensureTemporalCli({ log });
    expect(await runTemporalCli(cli, ['--version'])).toMatch(/temporal version \d+\.\d+\.\d+/);
    expect(await ensureTemporalCli()).toBe(cli);
  });

  it('fails clearly when its port is held by another process', async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    await expect(ensureTemporalDevServer({ ...CHECK, port, cli })).rejects.toThrow(`Port ${port} on 127.0.0.1 is in use`);
  });

  it('starts once, is reused, registers search attributes, and keeps workflows across restarts', { timeout: 180_000 }, async () => {
    server = await ensureTemporalDevServer({ ...CHECK, cli, log });
    expect(server.address).toBe(`127.0.0.1:${CHECK.port}`);
    expect(server.uiUrl).toBeUndefined();
    expect(server.dbFile).toMatch(/temporal-harness-check\/temporal\.db$/);
    // The database keeps a write-ahead log beside it.
    expect(existsSync(`${server.dbFile}-wal`)).toBe(true);

    const again = await ensureTemporalDevServer({ ...CHECK, cli });
    expect(again.address).toBe(server.address);
    expect(again.pid).toBe(server.pid);

    await ensureSearchAttributes({ cli, address: server.address, attributes: ATTRIBUTES });
    await ensureSearchAttributes({ cli, address: server.address, attributes: ATTRIBUTES });
    const listed = JSON.parse(
      await runTemporalCli(cli, ['operator', 'search-attribute', 'list', '--output', 'json', ...clientFlags(server.address)]),
    ) as { customAttributes: Record<string, string> };
    expect(listed.customAttributes).toMatchObject({ TenantId: 'INDEXED_VALUE_TYPE_KEYWORD', WorkflowKey: 'INDEXED_VALUE_TYPE_KEYWORD' });
    await expect(ensureSearchAttributes({ cli, address: server.address, attributes: { TenantId: 'Int' } })).rejects.toThrow(
      /TenantId already exists .* as INDEXED_VALUE_TYPE_KEYWORD, not Int/,
    );

    const workflowId = `persist-check-${Date.now()}`;
    await runTemporalCli(cli, [
      'workflow',
      'start',
      '--type',
      'Anything',
      '--task-queue',
      'q',
      '--workflow-id',
      workflowId,
      '--search-attribute',
      'TenantId="acme"',
      ...clientFlags(server.address),
    ]);

    await server.stop();
    expect(await isListening(CHECK.port)).toBe(false);
    await server.stop();

    server = await ensureTemporalDevServer({ ...CHECK, cli, log });
    expect(server.pid).not.toBe(again.pid);
    const described = JSON.parse(
      await runTemporalCli(cli, ['workflow', 'describe', '--workflow-id', workflowId, '--output', 'json', ...clientFlags(server.address)]),
    ) as { workflowExecutionInfo: { type: { name: string }; status: string; searchAttributes: { indexedFields: Record<string, { data: string }> } } };
    const info = described.workflowExecutionInfo;
    expect(info.type.name).toBe('Anything');
    expect(info.status).toBe('WORKFLOW_EXECUTION_STATUS_RUNNING');
    expect(Buffer.from(info.searchAttributes.indexedFields.TenantId!.data, 'base64').toString('utf8')).toBe('"acme"');

    const found = JSON.parse(
      await runTemporalCli(cli, ['workflow', 'list', '--query', `TenantId = "acme" AND WorkflowId = "${workflowId}"`, '--output', 'json', ...clientFlags(server.address)]),
    ) as { execution: { workflowId: string } }[];
    expect(found.map((w) => w.execution.workflowId)).toEqual([workflowId]);
  });

  it('restarts a server that another CLI (an earlier version) started', { timeout: 120_000 }, async () => {
    const stateFile = join(stateDir(CHECK.name), 'temporal.pid.json');
    writeFileSync(stateFile, JSON.stringify({ ...JSON.parse(readFileSync(stateFile, 'utf8')), cli: '/an/earlier/temporal' }));
    const earlierPid = server!.pid;
    server = await ensureTemporalDevServer({ ...CHECK, cli, log });
    expect(server.pid).not.toBe(earlierPid);
    expect(isAlive(earlierPid)).toBe(false);
  });

  it('restarts with the Web UI when asked for a UI port', { timeout: 120_000 }, async () => {
    const headlessPid = server?.pid;
    server = await ensureTemporalDevServer({ ...CHECK, uiPort: UI_PORT, cli, log });
    expect(server.pid).not.toBe(headlessPid);
    expect(server.uiUrl).toBe(`http://127.0.0.1:${UI_PORT}`);
    const response = await fetch(server.uiUrl!);
    expect(response.status).toBe(200);

    await server.stop();
    expect(await isListening(CHECK.port)).toBe(false);
    expect(await isListening(UI_PORT)).toBe(false);
  });
});
