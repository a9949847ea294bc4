import { execFile, spawn, spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { elapsed, findOnPath, isExecutable, runGo } from './go-build.ts';
import { isAlive, portIsFree, readText, signal, tail, waitForExit, withLock } from './process.ts';
import { cacheDir, isRoot, stateDir } from '../../control-plane/app/state-dir.ts';

/** The Kubernetes release `kube-apiserver` and `kubectl` are built from (`scripts/stack/kube-build/go.mod`). */
export const KUBERNETES_VERSION = '1.35.4';
/** The etcd that Kubernetes 1.35.4 requires, built from the same Go module (go.etcd.io/etcd/server/v3). */
export const ETCD_VERSION = '3.6.5';
/** Helm 3, installed with `go install helm.sh/helm/v3/cmd/helm@v3.20.2` (its go.mod has no `replace`). */
export const HELM_VERSION = '3.20.2';

type Log = (message: string) => void;

export interface KubeBinaries {
  kubeApiServer: string;
  kubectl: string;
  etcd: string;
}

export interface KubeApiServerOptions {
  /** State name: etcd's data, the certificates, logs and the kubeconfig live in `stateDir(name)`. */
  name: string;
  /** The API server's secure port on 127.0.0.1. */
  port: number;
  /** etcd's client port on 127.0.0.1 (default `port + 1`); its peer port is the next one. */
  etcdPort?: number;
  /** Resolved with {@link ensureKubeBinaries} when omitted. */
  binaries?: KubeBinaries;
  log?: Log;
}

export interface KubeApiServer {
  /** `https://127.0.0.1:<port>`. */
  url: string;
  /** A kubeconfig for the static admin user (group `system:masters`), context `<name>`. */
  kubeconfigPath: string;
  /** The admin's bearer token. */
  token: string;
  /** The CA that signed the serving certificate. */
  caFile: string;
  etcdUrl: string;
  kubectl: string;
  pids: { etcd: number; apiServer: number };
  /** Stops the API server, then etcd (SIGTERM, SIGKILL after 20 s). etcd's data is kept. */
  stop(): Promise<void>;
}

interface ServerState {
  version: string;
  /** The binaries the servers were started from, with their build times (absent: started before this was recorded). */
  builds?: string;
  port: number;
  etcdPort: number;
  etcdPid: number;
  apiServerPid: number;
}

const BUILD_MODULE_DIR = fileURLToPath(new URL('./kube-build/', import.meta.url));
const VERSION_PKG = 'k8s.io/component-base/version';
const CLIENT_VERSION_PKG = 'k8s.io/client-go/pkg/version';
const HELM_PACKAGE = 'helm.sh/helm/v3/cmd/helm';
/** Set at link time as Helm's release builds do: its version, and the Kubernetes minor it assumes without a cluster (else 1.20). */
const HELM_LDFLAGS = [
  '-s',
  '-w',
  `-X helm.sh/helm/v3/internal/version.version=v${HELM_VERSION}`,
  '-X helm.sh/helm/v3/internal/version.gitTreeState=clean',
  ...['pkg/chartutil', 'pkg/lint/rules'].flatMap((pkg) => [
    `-X helm.sh/helm/v3/${pkg}.k8sVersionMajor=${KUBERNETES_VERSION.split('.')[0]}`,
    `-X helm.sh/helm/v3/${pkg}.k8sVersionMinor=${KUBERNETES_VERSION.split('.')[1]}`,
  ]),
].join(' ');
const BUILD_LOCK_TIMEOUT_MS = 60 * 60_000;
const SERVER_LOCK_TIMEOUT_MS = 5 * 60_000;
const ETCD_READY_TIMEOUT_MS = 30_000;
const API_READY_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 20_000;
const PORT_GRACE_MS = 10_000;
const STATE_FILE = 'kube.pids.json';
const STAMP_FILE = '.build-stamp';
const SERVICE_CIDR = '10.0.0.0/24';
const SA_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/**
 * Returns `kube-apiserver`, `kubectl` and `etcd`. With `KUBEBUILDER_ASSETS` set (a directory holding
 * the three, as envtest's setup tool installs them) those are used as given. Otherwise they are
 * built once from the Go module in `scripts/stack/kube-build` (Kubernetes 1.35.4, etcd 3.6.5) into
 * `cacheDir('kube-v1.35.4')`, and rebuilt when that module's go.mod or go.sum changes. A cold build
 * takes several minutes (progress goes to `log`); builds are serialized across processes by a lock
 * file, and a process that waited for another's build reuses its result.
 */
export async function ensureKubeBinaries(opts: { log?: Log } = {}): Promise<KubeBinaries> {
  const { log } = opts;
  const assets = process.env.KUBEBUILDER_ASSETS;
  if (assets) {
    const given = binariesIn(assets);
    const missing = Object.values(given).filter((file) => !isExecutable(file));
    if (missing.length > 0) throw new Error(`KUBEBUILDER_ASSETS=${assets} lacks ${missing.join(', ')}`);
    return given;
  }

  const dir = cacheDir(`kube-v${KUBERNETES_VERSION}`);
  const binaries = binariesIn(dir);
  const stamp = moduleStamp();
  const built = () => readText(join(dir, STAMP_FILE)) === stamp && Object.values(binaries).every(isExecutable);
  if (built()) return binaries;

  await withLock(join(dir, '.build.lock'), async () => {
    if (built()) return;
    await buildKubeBinaries(dir, stamp, log);
  }, { timeoutMs: BUILD_LOCK_TIMEOUT_MS, log });
  return binaries;
}

/**
 * Returns a `helm` 3 binary: `HELM_BIN` when set (used as given), else v3.20.2 built once with
 * `go install` into `cacheDir('helm-v3.20.2')` (a few minutes; serialized by a lock file), linked
 * as Helm's release builds are, so that it assumes Kubernetes 1.35 when rendering without a cluster.
 */
export async function ensureHelm(opts: { log?: Log } = {}): Promise<string> {
  const { log } = opts;
  const override = process.env.HELM_BIN;
  if (override) {
    if (!isExecutable(override)) throw new Error(`HELM_BIN=${override} is not an executable file`);
    return override;
  }
  const dir = cacheDir(`helm-v${HELM_VERSION}`);
  const helm = join(dir, 'helm');
  const stamp = `${HELM_VERSION} ${HELM_LDFLAGS}\n`;
  const built = () => readText(join(dir, STAMP_FILE)) === stamp && isExecutable(helm);
  if (built()) return helm;

  await withLock(join(dir, '.build.lock'), async () => {
    if (built()) return;
    removeStaleBuildDirs(dir);
    const gobin = join(dir, `.build-${process.pid}`);
    rmSync(gobin, { recursive: true, force: true });
    const started = Date.now();
    log?.(`building helm v${HELM_VERSION} with go install into ${dir} (first run only; takes a few minutes)`);
    try {
      await runGo({
        args: ['install', '-v', `-ldflags=${HELM_LDFLAGS}`, `${HELM_PACKAGE}@v${HELM_VERSION}`],
        cwd: dir,
        env: { GOBIN: gobin },
        label: `helm v${HELM_VERSION}`,
        log,
        typical: 'a few minutes',
        missingGoHint: 'set HELM_BIN to a helm 3 binary.',
      });
      const version = await commandOutput(join(gobin, 'helm'), ['version', '--template', '{{.Version}}']);
      if (version !== `v${HELM_VERSION}`) throw new Error(`The built helm reports version ${JSON.stringify(version)}, expected v${HELM_VERSION}`);
      renameSync(join(gobin, 'helm'), helm);
      writeFileSync(join(dir, STAMP_FILE), stamp);
    } finally {
      rmSync(gobin, { recursive: true, force: true });
    }
    log?.(`built helm v${HELM_VERSION} in ${elapsed(started)}: ${helm}`);
  }, { timeoutMs: BUILD_LOCK_TIMEOUT_MS, log });
  return helm;
}

/**
 * Ensures etcd and kube-apiserver for `name` serve on 127.0.0.1 (the envtest pattern: no kubelet,
 * controller manager or scheduler; custom resources, Namespaces, Secrets, RBAC and server-side
 * dry runs work), and returns how to reach the API server. Both run detached and outlive the
 * caller, so later runs reuse them. Idempotent: a healthy pair of that name with the same ports
 * and version is reused; a server that does not answer, or has other settings, is restarted on the
 * same etcd data. The API server authenticates a static admin token (group `system:masters`),
 * authorizes with RBAC, serves a certificate signed by a CA of its own (in `stateDir(name)/pki`),
 * and signs service-account tokens. Throws when a port is held by anything else, or when a
 * server is not ready in time (etcd 30 s, API server 120 s). Serialized per name by a lock file.
 */
export async function ensureKubeApiServer(opts: KubeApiServerOptions): Promise<KubeApiServer> {
  const { name, port, log } = opts;
  const etcdPort = opts.etcdPort ?? port + 1;
  const base = stateDir(name);
  const binaries = opts.binaries ?? (await ensureKubeBinaries({ log }));
  const pki = ensurePki(base, await findOpenssl(log));
  const url = `https://127.0.0.1:${port}`;
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  const kubeconfigPath = join(base, 'kubeconfig');
  const pids = { etcd: 0, apiServer: 0 };
  // A rebuilt binary (another version or build inputs) gets servers of its own.
  const builds = [binaries.etcd, binaries.kubeApiServer].map((file) => `${file}@${statSync(file).mtimeMs}`).join(' ');

  await withLock(join(base, '.lock'), async () => {
    const state = readState(base);
    const etcdUp =
      state !== undefined &&
      state.etcdPid > 0 &&
      state.etcdPort === etcdPort &&
      state.builds === builds &&
      runs(state.etcdPid, binaries.etcd, base) &&
      (await etcdHealthy(etcdUrl));
    const apiUp =
      etcdUp &&
      state.apiServerPid > 0 &&
      state.port === port &&
      state.version === KUBERNETES_VERSION &&
      runs(state.apiServerPid, binaries.kubeApiServer, base) &&
      (await apiReady(url, pki));
    if (apiUp) {
      log?.(`reusing kube-apiserver "${name}" on ${url} (pid ${state.apiServerPid}, etcd pid ${state.etcdPid})`);
      pids.etcd = state.etcdPid;
      pids.apiServer = state.apiServerPid;
      return;
    }

    if (state) {
      log?.(`kube-apiserver "${name}" is not ready${etcdUp ? '' : ' (nor is its etcd)'} or has other settings; restarting it`);
      await stopProcess(state.apiServerPid, binaries.kubeApiServer, base);
      if (!etcdUp) await stopProcess(state.etcdPid, binaries.etcd, base);
    }
    const wanted: ServerState = { version: KUBERNETES_VERSION, builds, port, etcdPort, etcdPid: etcdUp ? state.etcdPid : 0, apiServerPid: 0 };

    if (!etcdUp) {
      await checkPorts(name, base, [port, etcdPort, etcdPort + 1], state ? PORT_GRACE_MS : 0);
      wanted.etcdPid = await startEtcd(base, binaries.etcd, etcdPort, log);
      writeState(base, wanted);
      await waitUntil(() => etcdHealthy(etcdUrl), wanted.etcdPid, ETCD_READY_TIMEOUT_MS, `etcd of "${name}" on ${etcdUrl}`, join(base, 'etcd.log'));
    } else {
      await checkPorts(name, base, [port], PORT_GRACE_MS);
    }

    log?.(`starting kube-apiserver ${KUBERNETES_VERSION} "${name}" on ${url}`);
    const started = Date.now();
    wanted.apiServerPid = startDetached(binaries.kubeApiServer, apiServerArgs(pki, port, etcdUrl), base, join(base, 'kube-apiserver.log'));
    writeState(base, wanted);
    await waitUntil(() => apiReady(url, pki), wanted.apiServerPid, API_READY_TIMEOUT_MS, `kube-apiserver "${name}" on ${url}`, join(base, 'kube-apiserver.log'));
    log?.(`kube-apiserver "${name}" is ready on ${url} after ${elapsed(started)} (pid ${wanted.apiServerPid}, etcd pid ${wanted.etcdPid})`);
    pids.etcd = wanted.etcdPid;
    pids.apiServer = wanted.apiServerPid;
  }, { timeoutMs: SERVER_LOCK_TIMEOUT_MS, log });

  writeIfChanged(kubeconfigPath, kubeconfig(name, url, pki), 0o600);
  return {
    url,
    kubeconfigPath,
    token: pki.token,
    caFile: pki.caFile,
    etcdUrl,
    kubectl: binaries.kubectl,
    pids,
    stop: () =>
      withLock(join(base, '.lock'), async () => {
        await stopProcess(pids.apiServer, binaries.kubeApiServer, base);
        await stopProcess(pids.etcd, binaries.etcd, base);
        rmSync(join(base, STATE_FILE), { force: true });
      }, { timeoutMs: SERVER_LOCK_TIMEOUT_MS }),
  };
}

/**
 * Runs `kubectl` against `kubeconfig` and returns its stdout; `input` is written to its stdin.
 * Rejects with kubectl's stderr (the API server's own message) when it exits non-zero.
 */
export function runKubectl(
  kubectl: string,
  kubeconfig: string,
  args: string[],
  opts: { input?: string; timeoutMs?: number } = {},
): Promise<string> {
  return runCommand(kubectl, ['--kubeconfig', kubeconfig, ...args], opts);
}

/** Runs a command and returns its stdout; rejects with its stderr when it exits non-zero. */
export function runCommand(file: string, args: string[], opts: { input?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      args,
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: opts.timeoutMs ?? 60_000, env: opts.env ?? process.env },
      (error, stdout, stderr) => {
        if (error) reject(Object.assign(new Error(stderr.trim() || error.message, { cause: error }), { stdout, stderr }));
        else resolve(stdout);
      },
    );
    child.stdin?.end(opts.input ?? '');
  });
}

function binariesIn(dir: string): KubeBinaries {
  return { kubeApiServer: join(dir, 'kube-apiserver'), kubectl: join(dir, 'kubectl'), etcd: join(dir, 'etcd') };
}

/** Changes whenever the build module (and so what gets built) changes. */
function moduleStamp(): string {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum']) hash.update(readFileSync(join(BUILD_MODULE_DIR, file)));
  return `${KUBERNETES_VERSION} ${hash.digest('hex')}\n`;
}

async function buildKubeBinaries(dir: string, stamp: string, log?: Log): Promise<void> {
  removeStaleBuildDirs(dir);
  const out = join(dir, `.build-${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out);
  const [major, minor] = KUBERNETES_VERSION.split('.');
  const ldflags = [
    '-s',
    '-w',
    ...[VERSION_PKG, CLIENT_VERSION_PKG].flatMap((pkg) => [
      `-X ${pkg}.gitMajor=${major}`,
      `-X ${pkg}.gitMinor=${minor}`,
      `-X ${pkg}.gitVersion=v${KUBERNETES_VERSION}`,
      `-X ${pkg}.gitTreeState=clean`,
    ]),
  ].join(' ');
  const started = Date.now();
  log?.(`building kube-apiserver and kubectl ${KUBERNETES_VERSION} and etcd ${ETCD_VERSION} from ${BUILD_MODULE_DIR} into ${dir} (first run only; a cold build costs about 15 CPU-minutes, 10 minutes or more on 2 cores)`);
  try {
    await runGo({
      args: [
        'build',
        '-v',
        `-ldflags=${ldflags}`,
        '-o',
        `${out}/`,
        'k8s.io/kubernetes/cmd/kube-apiserver',
        'k8s.io/kubernetes/cmd/kubectl',
        'go.etcd.io/etcd/server/v3',
      ],
      cwd: BUILD_MODULE_DIR,
      label: 'kube-apiserver, kubectl and etcd',
      log,
      typical: '10 minutes or more on 2 cores',
      missingGoHint: 'set KUBEBUILDER_ASSETS to a directory holding kube-apiserver, kubectl and etcd.',
    });
    // `go build -o dir/` names a main package after its import path: etcd's is go.etcd.io/etcd/server/v3.
    renameSync(join(out, 'server'), join(out, 'etcd'));
    const versions = await Promise.all([
      commandOutput(join(out, 'kube-apiserver'), ['--version']),
      commandOutput(join(out, 'kubectl'), ['version', '--client']),
      commandOutput(join(out, 'etcd'), ['--version']),
    ]);
    const expected = [`v${KUBERNETES_VERSION}`, `v${KUBERNETES_VERSION}`, `etcd Version: ${ETCD_VERSION}`];
    versions.forEach((text, i) => {
      if (!text?.includes(expected[i]!)) throw new Error(`A built binary reports ${JSON.stringify(text)}, expected ${expected[i]}`);
    });
    for (const file of ['kube-apiserver', 'kubectl', 'etcd']) renameSync(join(out, file), join(dir, file));
    writeFileSync(join(dir, STAMP_FILE), stamp);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  log?.(`built kube-apiserver, kubectl and etcd in ${elapsed(started)}: ${dir}`);
}

/** Removes the output directories (`.build-<pid>`) of builds whose process is gone (interrupted runs). */
function removeStaleBuildDirs(dir: string): void {
  for (const entry of readdirSync(dir)) {
    const pid = Number(/^\.build-(\d+)$/.exec(entry)?.[1]);
    if (pid > 0 && !isAlive(pid)) rmSync(join(dir, entry), { recursive: true, force: true });
  }
}

/** A command's trimmed stdout, or undefined when it cannot run or fails. */
function commandOutput(file: string, args: string[]): Promise<string | undefined> {
  if (!isExecutable(file)) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    execFile(file, args, { encoding: 'utf8', timeout: 30_000 }, (error, stdout) => resolve(error ? undefined : stdout.trim()));
  });
}

interface Pki {
  dir: string;
  caFile: string;
  token: string;
}

/** `openssl`, installed with apt-get (as root) when missing. */
async function findOpenssl(log?: Log): Promise<string> {
  const found = findOnPath('openssl');
  if (found) return found;
  if (!isRoot()) throw new Error('openssl is not installed; it is needed to make the test API server\'s certificates: apt-get install openssl');
  log?.('openssl not found; installing it with apt-get');
  const aptGet = ['-o', 'DPkg::Lock::Timeout=300'];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await runCommand('apt-get', [...aptGet, 'update'], { env, timeoutMs: 600_000 });
  await runCommand('apt-get', [...aptGet, 'install', '-y', 'openssl'], { env, timeoutMs: 600_000 });
  const installed = findOnPath('openssl');
  if (!installed) throw new Error('apt-get installed openssl, but it is not on PATH');
  return installed;
}

/**
 * Creates, once, what the API server authenticates with: a CA and a serving certificate for
 * 127.0.0.1 and localhost (openssl, valid 10 years), the service-account signing key pair (Node
 * crypto) and a static admin token.
 */
function ensurePki(base: string, openssl: string): Pki {
  const dir = join(base, 'pki');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = (name: string) => join(dir, name);
  const complete = ['ca.crt', 'apiserver.crt', 'apiserver.key', 'sa.key', 'sa.pub', 'token.csv'].every((name) => existsSync(file(name)));
  if (!complete) {
    const run = (args: string[]) => {
      const result = spawnSyncText(openssl, args, dir);
      if (result.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${tail(result.output)}`);
    };
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '3650', '-subj', '/CN=svc-platform-test-ca',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    run(['req', ...ec, '-keyout', 'apiserver.key', '-out', 'apiserver.csr', '-subj', '/CN=kube-apiserver']);
    writeFileSync(
      file('apiserver.ext'),
      [
        'basicConstraints=critical,CA:FALSE',
        'keyUsage=critical,digitalSignature,keyEncipherment',
        'extendedKeyUsage=serverAuth',
        'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1',
        '',
      ].join('\n'),
    );
    run(['x509', '-req', '-in', 'apiserver.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'apiserver.crt',
      '-days', '3650', '-extfile', 'apiserver.ext']);
    const { privateKey, publicKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    writeFileSync(file('sa.key'), privateKey, { mode: 0o600 });
    writeFileSync(file('sa.pub'), publicKey);
    writeFileSync(file('token.csv'), `${randomBytes(32).toString('hex')},svc-admin,svc-admin,system:masters\n`, { mode: 0o600 });
  }
  return { dir, caFile: file('ca.crt'), token: readText(file('token.csv')).split(',')[0]! };
}

function spawnSyncText(file: string, args: string[], cwd: string): { status: number | null; output: string } {
  const result = spawnSync(file, args, { cwd, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error?.message ?? ''}` };
}

function apiServerArgs(pki: Pki, port: number, etcdUrl: string): string[] {
  const p = (name: string) => join(pki.dir, name);
  return [
    '--advertise-address=127.0.0.1',
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${pki.dir}`,
    `--tls-cert-file=${p('apiserver.crt')}`,
    `--tls-private-key-file=${p('apiserver.key')}`,
    `--client-ca-file=${p('ca.crt')}`,
    `--etcd-servers=${etcdUrl}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    `--service-account-issuer=${SA_ISSUER}`,
    `--service-account-key-file=${p('sa.pub')}`,
    `--service-account-signing-key-file=${p('sa.key')}`,
    `--token-auth-file=${p('token.csv')}`,
    '--authorization-mode=RBAC',
    '--allow-privileged=true',
    // As envtest: nothing mints service-account tokens into pods here (no controller manager).
    '--disable-admission-plugins=ServiceAccount',
    '--enable-priority-and-fairness=false',
    '--profiling=false',
  ];
}

async function startEtcd(base: string, etcd: string, clientPort: number, log?: Log): Promise<number> {
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${clientPort + 1}`;
  log?.(`starting etcd ${ETCD_VERSION} on ${client}`);
  return startDetached(
    etcd,
    [
      '--name=svc',
      `--data-dir=${join(base, 'etcd')}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=svc=${peer}`,
      '--listen-metrics-urls=',
      // A test store: losing the last writes on a machine crash is fine, waiting for fsync is not.
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
    base,
    join(base, 'etcd.log'),
  );
}

/** Spawns a detached process logging to `logFile` and returns its pid. */
function startDetached(file: string, args: string[], cwd: string, logFile: string): number {
  const out = openSync(logFile, 'w');
  try {
    const child = spawn(file, args, { cwd, detached: true, stdio: ['ignore', out, out] });
    child.once('error', () => {});
    child.unref();
    if (!child.pid) throw new Error(`could not run ${file}`);
    return child.pid;
  } finally {
    closeSync(out);
  }
}

async function waitUntil(ready: () => Promise<boolean>, pid: number, timeoutMs: number, what: string, logFile: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (!isAlive(pid)) throw new Error(`${what} exited before it was ready; log ${logFile}:\n${tail(readText(logFile))}`);
    if (Date.now() > deadline) {
      throw new Error(`${what} was not ready within ${timeoutMs / 1000} s; log ${logFile}:\n${tail(readText(logFile))}`);
    }
    await sleep(250);
  }
}

/**
 * Throws when one of `ports` is taken. With `graceMs`, waits that long for ports that our own
 * stopped or killed servers may still hold: a multi-threaded process is reported dead (a zombie) as
 * soon as its main thread exits, a moment before its last thread closes its sockets.
 */
async function checkPorts(name: string, base: string, ports: number[], graceMs: number): Promise<void> {
  const deadline = Date.now() + graceMs;
  for (const port of ports) {
    while (!(await portIsFree(port))) {
      if (Date.now() < deadline) {
        await sleep(200);
        continue;
      }
      throw new Error(
        `Port ${port} on 127.0.0.1 is in use by another process, so the test Kubernetes API server "${name}" ` +
          `(${base}) cannot start there. Stop that process or choose other ports.`,
      );
    }
  }
}

/** The program that live process `pid` runs on this state directory (not a recycled pid), if any. */
function programOn(pid: number, base: string): string | undefined {
  if (!(pid > 0 && isAlive(pid))) return undefined;
  const cmdline = readText(`/proc/${pid}/cmdline`).split('\0');
  return cmdline.some((arg) => arg.includes(base)) ? cmdline[0] : undefined;
}

/** Whether `pid` runs `binary` on this state directory. */
const runs = (pid: number, binary: string, base: string) => programOn(pid, base) === binary;

/** Whether `pid` runs a build of `binary`, this one or an earlier one, on this state directory. */
const runsAnyBuild = (pid: number, binary: string, base: string) => basename(programOn(pid, base) ?? '') === basename(binary);

async function stopProcess(pid: number, binary: string, base: string): Promise<void> {
  if (!runsAnyBuild(pid, binary, base)) return;
  signal(pid, 'SIGTERM');
  if (await waitForExit(pid, STOP_GRACE_MS)) return;
  signal(pid, 'SIGKILL');
  if (!(await waitForExit(pid, 10_000))) throw new Error(`${binary} (pid ${pid}) did not exit after SIGKILL`);
}

function readState(base: string): ServerState | undefined {
  try {
    return JSON.parse(readText(join(base, STATE_FILE))) as ServerState;
  } catch {
    return undefined;
  }
}

function writeState(base: string, state: ServerState): void {
  writeFileSync(join(base, STATE_FILE), `${JSON.stringify(state)}\n`);
}

/** Whether etcd's `GET /health` reports healthy (a connection of its own, closed after the answer). */
function etcdHealthy(etcdUrl: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpRequest(`${etcdUrl}/health`, { agent: false, timeout: 3_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(res.statusCode === 200 && /"health":\s*"true"/.test(body)));
      res.on('error', () => resolve(false));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
    req.end();
  });
}

/**
 * Whether `GET /readyz` answers 200, over TLS verified against the harness's CA. No keep-alive:
 * an open connection would hold the port after the server stops and block a restart on it.
 */
function apiReady(url: string, pki: Pki): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      `${url}/readyz`,
      { ca: readFileSync(pki.caFile), headers: { authorization: `Bearer ${pki.token}` }, agent: false, timeout: 5_000 },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
    req.end();
  });
}

function kubeconfig(name: string, url: string, pki: Pki): string {
  const ca = readFileSync(pki.caFile).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${name}`,
    '  cluster:',
    `    server: ${url}`,
    `    certificate-authority-data: ${ca}`,
    'users:',
    `- name: ${name}-admin`,
    '  user:',
    `    token: ${pki.token}`,
    'contexts:',
    `- name: ${name}`,
    '  context:',
    `    cluster: ${name}`,
    `    user: ${name}-admin`,
    `current-context: ${name}`,
    '',
  ].join('\n');
}

function writeIfChanged(file: string, content: string, mode: number): void {
  if (readText(file) !== content) writeFileSync(file, content, { mode });
}

