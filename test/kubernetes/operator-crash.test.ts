import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { runKubectl } from '../../scripts/stack/kubernetes.ts';
import { killProcessGroup, startRoleProcess, startWorkerProcess } from '../harness/process-group.ts';
import { startTestStack, type TestStack } from '../harness/stack.ts';
import { runStatusesAt } from '../harness/temporal-runs.ts';
import { until } from '../harness/until.ts';

const CRDS_DIR = fileURLToPath(new URL('../../crds/', import.meta.url));
const kubectl = (args: string[], input?: unknown) =>
  runKubectl(inject('kubectlPath'), inject('kubeconfigPath'), args, { input: input === undefined ? undefined : JSON.stringify(input) });
const getTenant = async (name: string) => JSON.parse(await kubectl(['get', 'tenant', name, '-o', 'json']));
const readyCondition = (object: any) => object?.status?.conditions?.find((c: any) => c.type === 'Ready');

/**
 * The operator process (`--role operator`) is killed by process group in the middle of reconciling
 * a Tenant: its tenant row, Namespace and provisioning workflow started, the Tenant not Ready yet
 * (no worker runs, so the workflow waits). The operator restarted in its place (the same pod name,
 * as a restarted container has) converges the Tenant to Ready once a worker runs, having made
 * each thing once.
 */
describe('the operator killed mid-reconcile', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  const leaseNamespace = `operator-crash-${randomUUID().slice(0, 8)}`;
  const processes: ChildProcess[] = [];
  let stack: TestStack;
  const operatorEnv = { KUBECONFIG: inject('kubeconfigPath'), OPERATOR_NAMESPACE: leaseNamespace, POD_NAME: 'operator-0', PUBLIC_URL: '' };

  beforeAll(async () => {
    await kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=svc-operator-test', '-f', CRDS_DIR]);
    await kubectl(['create', 'namespace', leaseNamespace]);
    stack = await startTestStack({ worker: false });
    operatorEnv.PUBLIC_URL = stack.url;
  }, 180_000);
  afterEach(() => {
    for (const child of processes.splice(0)) if (child.exitCode === null) killProcessGroup(child);
  });
  afterAll(async () => {
    await stack?.close();
    await sql.end();
  }, 60_000);

  it('converges the Tenant to Ready after a restart, with one tenant, one Namespace and one provisioning run', async () => {
    const slug = `crash-${randomUUID().slice(0, 8)}`;
    const first = startRoleProcess(stack, 'operator', operatorEnv);
    processes.push(first);
    await kubectl(['create', '-f', '-'], { apiVersion: 'platform.svc.dev/v1alpha1', kind: 'Tenant', metadata: { name: slug }, spec: { name: `Crash ${slug}`, slug, homeRegion: 'eu', domains: [`${slug}.example`] } });

    const underway = await until(() => getTenant(slug), (t) => Boolean(t.status?.provisioningWorkflowId) && readyCondition(t)?.status !== 'True', 90_000);
    killProcessGroup(first);
    const killedAt = Date.now();
    processes.push(startRoleProcess(stack, 'operator', operatorEnv), startWorkerProcess(stack));

    const ready = await until(() => getTenant(slug), (t) => readyCondition(t)?.status === 'True', 120_000);
    process.stderr.write(`[operator-crash] killed at ${JSON.stringify(readyCondition(underway))}; Ready ${Date.now() - killedAt} ms after the kill\n`);
    expect(ready.status).toMatchObject({ phase: 'Ready', namespace: `tenant-${slug}`, tenantId: underway.status.tenantId });

    expect(await sql`select id::text as id, status from tenants where slug = ${slug}`).toEqual([{ id: underway.status.tenantId, status: 'active' }]);
    expect(JSON.parse(await kubectl(['get', 'namespace', `tenant-${slug}`, '-o', 'json'])).status.phase).toBe('Active');
    // The tenant is marked active by the run's last step; the run itself closes just after.
    const runs = () => runStatusesAt(stack.temporal, underway.status.provisioningWorkflowId);
    expect(await until(runs, (statuses) => !statuses.includes('RUNNING'), 30_000)).toEqual(['COMPLETED']);
    // Deleted while this operator runs, so that its finalizer is handled and no other test's operator inherits it.
    await kubectl(['delete', 'tenant', slug, '--wait=false']);
    await until(() => kubectl(['get', 'tenants', '-o', 'name']), (names) => !names.includes(`/${slug}\n`) && !names.endsWith(`/${slug}`), 60_000);
  }, 300_000);
});
