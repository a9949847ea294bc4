import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadKubeConfig } from './kube.ts';

describe('loadKubeConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const kubeconfig = (name: string, server: string) => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name, cluster: { server } }],
        users: [{ name, user: { token: `${name}-token` } }],
        contexts: [{ name, context: { cluster: name, user: name } }],
        'current-context': name,
      }),
    );
    return file;
  };

  it('loads one file, or merges the files of a KUBECONFIG-style list with the first one current', () => {
    const dev = kubeconfig('dev', 'https://127.0.0.1:6443');
    const staging = kubeconfig('staging', 'https://staging.example:6443');
    expect(loadKubeConfig(dev).getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');

    const merged = loadKubeConfig([staging, dev].join(delimiter));
    expect(merged.getContexts().map((c) => c.name).sort()).toEqual(['dev', 'staging']);
    expect(merged.getCurrentContext()).toBe('staging');
    expect(merged.getCurrentCluster()?.server).toBe('https://staging.example:6443');
  });
});
