// A real control plane on loopback: Debian's etcd, then kube-apiserver (Node,RBAC authorization,
// NodeRestriction, bootstrap tokens), kube-controller-manager (service accounts, node lifecycle,
// CSR approving and signing, bootstrap signer) and kube-scheduler, on free ports, with kubeconfigs.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { request } from 'node:https';
import { join } from 'node:path';
import { freePort } from '../free-port.ts';
import { builtBinary } from './build.ts';
import { clientKubeconfig, issue, makeClusterPki } from './pki.ts';

export interface ControlPlaneOptions {
  dir: string;
  log?: (line: string) => void;
  /** Leave the processes running when this process exits (`lab:cloud up`). */
  detached?: boolean;
  /** Extra kube-apiserver / kube-controller-manager flags (shortened timeouts in tests). */
  apiserverFlags?: string[];
  controllerManagerFlags?: string[];
  /**
   * The ports of a start's `attempt` (from 1): etcd's client and peer ports and the API server's.
   * Default: three from freePort(). Tests hold a port here to prove the plane starts again.
   */
  ports?: (attempt: number) => Promise<[number, number, number]>;
}

export interface ControlPlane {
  dir: string;
  /** `https://127.0.0.1:PORT`. */
  server: string;
  port: number;
  adminKubeconfig: string;
  caFile: string;
  pids(): Record<string, number | undefined>;
  /** A kubeconfig with a client certificate `CN=system:node:<name>, O=system:nodes`. */
  nodeKubeconfig(name: string, server?: string): string;
  /**
   * `apiserver_request_total` from the API server's /metrics (as admin), summed by
   * `VERB resource[/subresource]` (counted when a request ends: a running watch is not in it).
   */
  requestCounts(): Promise<Map<string, number>>;
  /** GET `path` on the API server as admin: status code and body (0 and '' when nothing answers). */
  adminGet(path: string): Promise<{ status: number; body: string }>;
  /** Stops the API server alone (a link cut); startApiserver brings it back on the same port. */
  stopApiserver(): Promise<void>;
  startApiserver(): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** GET `path` on the API server as admin: status code and body (0 and '' when nothing answers). */
function get(
  dir: string,
  port: number,
  path: string,
  timeout = 30_000,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        ca: readFileSync(join(dir, 'ca.crt')),
        cert: readFileSync(join(dir, 'admin.crt')),
        key: readFileSync(join(dir, 'admin.key')),
        timeout,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', () => resolve({ status: 0, body: '' }));
      },
    );
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** Sums `apiserver_request_total` samples of a /metrics text by `VERB resource[/subresource]`. */
export function parseRequestTotals(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = Object.fromEntries(
      [...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]] as [string, string]),
    );
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    const key = `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
    out.set(key, (out.get(key) ?? 0) + value);
  }
  return out;
}

/** GET `path` on the API server as admin; the status code, or 0 when nothing answers. */
const probe = async (dir: string, port: number, path: string): Promise<number> =>
  (await get(dir, port, path, 2_000)).status;

/** The last `n` lines of a log file ('' when it cannot be read). */
function logTail(file: string, n = 12): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n');
  } catch {
    return '';
  }
}

/** A process of the plane exited before it was ready; `tail` is the end of its log. */
class ExitedEarly extends Error {
  constructor(
    what: string,
    code: number | null,
    readonly log: string,
    readonly tail: string,
  ) {
    super(`${what} exited ${code}; see ${log}; it ends:\n${tail}`);
  }
}

async function waitUntil(
  what: string,
  fn: () => Promise<boolean>,
  proc: () => ChildProcess | undefined,
  log: string,
  timeoutMs = 90_000,
) {
  for (const end = Date.now() + timeoutMs; Date.now() < end; await sleep(200)) {
    if (await fn()) return;
    const p = proc();
    if (p && p.exitCode !== null) throw new ExitedEarly(what, p.exitCode, log, logTail(log));
  }
  throw new Error(`${what} not ready within ${timeoutMs / 1000} s; see ${log}; it ends:\n${logTail(log)}`);
}

/** The status code of a plain HTTP GET, or 0 when nothing answers within 2 s. */
const httpStatus = (url: string): Promise<number> =>
  new Promise((resolve) => {
    const req = httpGet(url, { timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
  });

/** Objects kubeadm creates for TLS bootstrapping and join discovery. */
const BOOTSTRAP_RBAC = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "outpost-lab:apiserver-kubelet-client"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:kubelet-api-admin"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "kube-apiserver-kubelet-client"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "outpost-lab:node-bootstrapper"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:node-bootstrapper"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:bootstrappers"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "outpost-lab:node-autoapprove-bootstrap"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:certificates.k8s.io:certificatesigningrequests:nodeclient"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:bootstrappers"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "outpost-lab:node-autoapprove-certificate-rotation"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:nodes"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: "outpost-lab:bootstrap-signer-clusterinfo", namespace: kube-public}
rules: [{apiGroups: [""], resources: [configmaps], resourceNames: [cluster-info], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: "outpost-lab:bootstrap-signer-clusterinfo", namespace: kube-public}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: "outpost-lab:bootstrap-signer-clusterinfo"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:anonymous"}]
`;

/** Starts etcd and the control plane in `dir`; resolves once the API server is ready and set up. */
export async function startControlPlane(o: ControlPlaneOptions): Promise<ControlPlane> {
  const log = o.log ?? ((l: string) => process.stderr.write(`lab:cloud: ${l}\n`));
  const bin = (name: string) => {
    const p = builtBinary(name);
    if (!p) throw new Error(`${name} is not built: run \`npm run lab:cloud -- build\``);
    return p;
  };
  const { dir } = o;
  mkdirSync(dir, { recursive: true });
  makeClusterPki(dir);
  if (!existsSync(join(dir, 'admin.crt'))) issue(dir, 'admin', '/O=system:masters/CN=outpost-lab-admin');
  // The API server's identity when it calls a node's API (logs, exec, port-forward, stats), as
  // kubeadm's apiserver-kubelet-client; authorized by the node with a SubjectAccessReview.
  if (!existsSync(join(dir, 'apiserver-kubelet-client.crt')))
    issue(dir, 'apiserver-kubelet-client', '/CN=kube-apiserver-kubelet-client');
  let port = 0;
  let server = '';
  const adminKubeconfig = join(dir, 'admin.kubeconfig');
  const procs: Record<string, ChildProcess | undefined> = {};
  const start = (name: string, cmd: string, args: string[]) => {
    const out = openSync(join(dir, `${name}.log`), 'a');
    const child = spawn(cmd, args, { stdio: ['ignore', out, out], detached: true });
    if (o.detached) child.unref();
    procs[name] = child;
    return child;
  };
  const stopOne = async (name: string) => {
    const p = procs[name];
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    const t = setTimeout(() => p.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
  };
  const stopAll = async () => {
    for (const n of ['kube-scheduler', 'kube-controller-manager', 'kube-apiserver', 'etcd']) await stopOne(n);
  };
  const apiserverLog = join(dir, 'kube-apiserver.log');
  let apiserverArgs: string[] = [];
  const runApiserver = async () => {
    start('kube-apiserver', bin('kube-apiserver'), apiserverArgs);
    await waitUntil(
      'kube-apiserver',
      async () => (await probe(dir, port, '/readyz')) === 200,
      () => procs['kube-apiserver'],
      apiserverLog,
    );
  };
  /** Starts the API server again on its port (after stopApiserver); waits while the port is held. */
  const startApiserver = async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await runApiserver();
      } catch (e) {
        if (!(e instanceof ExitedEarly) || !/address already in use/.test(e.tail) || attempt >= 30) throw e;
        await sleep(1_000);
      }
    }
  };

  try {
    // Each try on fresh ports and a fresh etcd: a process that exits before it is ready (a port
    // taken since it was found free, etcd too slow for the API server's dial timeout on a loaded
    // machine) is said on stderr with the end of its log, and the plane starts again.
    for (let attempt = 1; ; attempt++) {
      const [etcdPort, peerPort, apiPort] = (await o.ports?.(attempt)) ?? [
        await freePort(),
        await freePort(),
        await freePort(),
      ];
      port = apiPort;
      server = `https://127.0.0.1:${port}`;
      writeFileSync(adminKubeconfig, clientKubeconfig(dir, server, 'admin', 'admin'));
      const etcdUrl = `http://127.0.0.1:${etcdPort}`;
      rmSync(join(dir, 'etcd'), { recursive: true, force: true });
      try {
        start('etcd', 'etcd', [
          '--name=lab',
          `--data-dir=${join(dir, 'etcd')}`,
          `--listen-client-urls=${etcdUrl}`,
          `--advertise-client-urls=${etcdUrl}`,
          `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
          `--initial-cluster=lab=http://127.0.0.1:${peerPort}`,
          '--log-level=warn',
        ]);
        await waitUntil(
          'etcd',
          async () => (await httpStatus(`${etcdUrl}/health`)) === 200,
          () => procs.etcd,
          join(dir, 'etcd.log'),
        );
        apiserverArgs = [
          `--etcd-servers=${etcdUrl}`,
          '--bind-address=127.0.0.1',
          '--advertise-address=127.0.0.1',
          `--secure-port=${port}`,
          '--insecure-port=0',
          `--tls-cert-file=${join(dir, 'apiserver.crt')}`,
          `--tls-private-key-file=${join(dir, 'apiserver.key')}`,
          `--client-ca-file=${join(dir, 'ca.crt')}`,
          '--authorization-mode=Node,RBAC',
          '--enable-admission-plugins=NodeRestriction',
          '--enable-bootstrap-token-auth',
          `--service-account-key-file=${join(dir, 'sa.pub')}`,
          `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
          '--service-account-issuer=https://kubernetes.default.svc',
          '--api-audiences=https://kubernetes.default.svc',
          '--service-cluster-ip-range=10.96.0.0/16',
          '--feature-gates=BoundServiceAccountTokenVolume=true',
          '--allow-privileged=true',
          '--profiling=false',
          `--kubelet-client-certificate=${join(dir, 'apiserver-kubelet-client.crt')}`,
          `--kubelet-client-key=${join(dir, 'apiserver-kubelet-client.key')}`,
          // Node serving certificates are checked (kubelet-serving CSRs are signed by the lab CA);
          // nodes are dialled at their InternalIP (`--node-ip`), as kubeadm configures it.
          `--kubelet-certificate-authority=${join(dir, 'ca.crt')}`,
          '--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname',
          ...(o.apiserverFlags ?? []),
        ];
        const t0 = Date.now();
        await runApiserver();
        log(`kube-apiserver ready at ${server} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        break;
      } catch (e) {
        if (!(e instanceof ExitedEarly) || attempt >= 3) throw e;
        process.stderr.write(
          `lab:cloud: ${e.message}\nlab:cloud: starting the control plane again on fresh ports (${attempt}/2)\n`,
        );
        await stopAll();
      }
    }
    start('kube-controller-manager', bin('kube-controller-manager'), [
      `--kubeconfig=${adminKubeconfig}`,
      '--leader-elect=false',
      '--port=0',
      '--secure-port=0',
      '--use-service-account-credentials',
      `--service-account-private-key-file=${join(dir, 'sa.key')}`,
      `--root-ca-file=${join(dir, 'ca.crt')}`,
      `--cluster-signing-cert-file=${join(dir, 'ca.crt')}`,
      `--cluster-signing-key-file=${join(dir, 'ca.key')}`,
      '--controllers=*,bootstrapsigner,tokencleaner',
      '--feature-gates=BoundServiceAccountTokenVolume=true',
      ...(o.controllerManagerFlags ?? []),
    ]);
    start('kube-scheduler', bin('kube-scheduler'), [
      `--kubeconfig=${adminKubeconfig}`,
      '--leader-elect=false',
      '--port=0',
      '--secure-port=0',
    ]);
    const kubectl = (args: string[], input?: string) =>
      execFileSync('kubectl', ['--kubeconfig', adminKubeconfig, ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
        ...(input ? { input } : {}),
      }).toString();
    const clusterInfo = `apiVersion: v1
kind: ConfigMap
metadata: {name: cluster-info, namespace: kube-public}
data:
  kubeconfig: |
${clientKubeconfigCluster(dir, server)
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}
`;
    kubectl(['apply', '-f', '-'], `${BOOTSTRAP_RBAC}---\n${clusterInfo}`);
    return {
      dir,
      server,
      port,
      adminKubeconfig,
      caFile: join(dir, 'ca.crt'),
      pids: () => Object.fromEntries(Object.entries(procs).map(([k, p]) => [k, p?.pid])),
      nodeKubeconfig(name, via = server) {
        const file = `node-${name}`;
        if (!existsSync(join(dir, `${file}.crt`))) issue(dir, file, `/O=system:nodes/CN=system:node:${name}`);
        const path = join(dir, `${file}${via === server ? '' : `-${new URL(via).port}`}.kubeconfig`);
        writeFileSync(path, clientKubeconfig(dir, via, `system:node:${name}`, file));
        return path;
      },
      adminGet: (path) => get(dir, port, path),
      async requestCounts() {
        const r = await get(dir, port, '/metrics');
        if (r.status !== 200) throw new Error(`kube-apiserver /metrics: HTTP ${r.status}`);
        return parseRequestTotals(r.body);
      },
      stopApiserver: () => stopOne('kube-apiserver'),
      startApiserver,
      stop: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

/** The kubeconfig kubeadm publishes in kube-public/cluster-info: server and CA, no user. */
function clientKubeconfigCluster(dir: string, server: string): string {
  const ca = readFileSync(join(dir, 'ca.crt')).toString('base64');
  return `apiVersion: v1
kind: Config
clusters:
- name: ""
  cluster:
    certificate-authority-data: ${ca}
    server: ${server}
contexts: []
current-context: ""
preferences: {}
users: []`;
}
