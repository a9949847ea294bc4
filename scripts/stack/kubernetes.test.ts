import { request } from 'node:https';
import { createServer, type Server } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isAlive } from './process.ts';
import { stateDir } from '../../control-plane/app/state-dir.ts';
import {
  ensureKubeApiServer,
  ensureKubeBinaries,
  ETCD_VERSION,
  KUBERNETES_VERSION,
  runCommand,
  runKubectl,
  type KubeApiServer,
  type KubeBinaries,
} from './kubernetes.ts';

/** Its own instance (not the suite's), since this test stops and kills it. etcd takes the next two ports. */
const CHECK = { name: 'kube-harness-check', port: 26463 } as const;
const log = (msg: string) => process.stderr.write(`[${CHECK.name}] ${msg}\n`);

function get(server: KubeApiServer, path: string, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { ca: readFileSync(server.caFile), agent: false, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('error', reject);
    req.end();
  });
}

describe('ensureKubeApiServer', () => {
  let binaries: KubeBinaries;
  let server: KubeApiServer | undefined;
  let blocker: Server | undefined;

  afterAll(async () => {
    await server?.stop();
    blocker?.close();
  });

  it('finds or builds kube-apiserver, kubectl and etcd of the pinned versions', { timeout: 60 * 60_000 }, async () => {
    binaries = await ensureKubeBinaries({ log });
    expect(await runCommand(binaries.kubeApiServer, ['--version'])).toContain(`Kubernetes v${KUBERNETES_VERSION}`);
    expect(await runCommand(binaries.kubectl, ['version', '--client'])).toContain(`Client Version: v${KUBERNETES_VERSION}`);
    expect(await runCommand(binaries.etcd, ['--version'])).toContain(`etcd Version: ${ETCD_VERSION}`);
    expect(await ensureKubeBinaries()).toEqual(binaries);
  });

  it('fails clearly when its port is held by another process', async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    // The API server's own port is one found free, not the blocked port's neighbour, which another process may hold.
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const apiPort = (free.address() as { port: number }).port;
    await new Promise((resolve) => free.close(resolve));
    await expect(ensureKubeApiServer({ name: 'kube-harness-blocked', port: apiPort, etcdPort: port, binaries })).rejects.toThrow(
      `Port ${port} on 127.0.0.1 is in use by another process`,
    );
  });

  it('starts etcd and the API server once, reuses them, and serves with TLS, token auth and RBAC', { timeout: 240_000 }, async () => {
    server = await ensureKubeApiServer({ ...CHECK, binaries, log });
    expect(server.url).toBe(`https://127.0.0.1:${CHECK.port}`);
    expect(server.etcdUrl).toBe(`http://127.0.0.1:${CHECK.port + 1}`);
    const again = await ensureKubeApiServer({ ...CHECK, binaries });
    expect(again.pids).toEqual(server.pids);

    expect(await get(server, '/readyz', server.token)).toBe(200);
    expect(await get(server, '/api/v1/namespaces', 'not-the-token')).toBe(401);
    expect(await get(server, '/api/v1/namespaces')).toBe(403);
    const kubectl = (args: string[], input?: string) => runKubectl(server!.kubectl, server!.kubeconfigPath, args, { input });
    expect((await kubectl(['version', '-o', 'json'])).includes(`"gitVersion": "v${KUBERNETES_VERSION}"`)).toBe(true);
    expect((await kubectl(['auth', 'can-i', 'create', 'secrets'])).trim()).toBe('yes');
    const stranger = await kubectl(['auth', 'can-i', '--as', 'someone', 'get', 'secrets']).catch((error: { stdout?: string }) => error.stdout ?? '');
    expect(stranger.trim()).toBe('no');
    await kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept', namespace: 'default' }, data: { a: '1' } }));
  });

  it('keeps etcd\'s data across a stop, and restarts an API server that died', { timeout: 240_000 }, async () => {
    await server!.stop();
    expect(isAlive(server!.pids.apiServer)).toBe(false);
    expect(isAlive(server!.pids.etcd)).toBe(false);

    server = await ensureKubeApiServer({ ...CHECK, binaries, log });
    const kubectl = (args: string[]) => runKubectl(server!.kubectl, server!.kubeconfigPath, args);
    expect(await kubectl(['get', 'configmap', 'kept', '-n', 'default', '-o', 'jsonpath={.data.a}'])).toBe('1');

    process.kill(server.pids.apiServer, 'SIGKILL');
    const etcdPid = server.pids.etcd;
    const restarted = await ensureKubeApiServer({ ...CHECK, binaries, log });
    expect(restarted.pids.apiServer).not.toBe(server.pids.apiServer);
    expect(restarted.pids.etcd).toBe(etcdPid);
    server = restarted;
    expect(await kubectl(['get', 'configmap', 'kept', '-n', 'default', '-o', 'jsonpath={.data.a}'])).toBe('1');
  });

  it('restarts both servers when they run binaries of another build, keeping etcd\'s data', { timeout: 240_000 }, async () => {
    const stateFile = join(stateDir(CHECK.name), 'kube.pids.json');
    writeFileSync(stateFile, JSON.stringify({ ...JSON.parse(readFileSync(stateFile, 'utf8')), builds: 'an earlier build' }));
    const before = server!.pids;
    server = await ensureKubeApiServer({ ...CHECK, binaries, log });
    expect(server.pids.apiServer).not.toBe(before.apiServer);
    expect(server.pids.etcd).not.toBe(before.etcd);
    expect(isAlive(before.apiServer) || isAlive(before.etcd)).toBe(false);
    const kubectl = (args: string[]) => runKubectl(server!.kubectl, server!.kubeconfigPath, args);
    expect(await kubectl(['get', 'configmap', 'kept', '-n', 'default', '-o', 'jsonpath={.data.a}'])).toBe('1');
  });
});
