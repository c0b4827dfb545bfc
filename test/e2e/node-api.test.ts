// The node API against the real thing: a kube-apiserver 1.20.2 (the cloud lab) that calls Outpost
// on its kubelet port for pods bound to it, running on a real containerd (the lab), driven with the
// real kubectl as cluster admin. The node's serving CSR is approved as an admin would.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort } from '../../scripts/free-port.ts';
import { type Run, run, startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { cloudLabOrSkip } from '../helpers/cloud.ts';
import { labOrSkip, waitFor } from '../helpers/lab.ts';

const FILE = 'test/e2e/node-api.test.ts';
const NODE = 'edge-na';
const NS = 'node-api';

/** A raw HTTPS GET to the node API; the status code (0 when the TLS handshake fails). */
function nodeGet(port: number, path: string, opts: { cert?: Buffer; key?: Buffer } = {}): Promise<number> {
  return new Promise((resolve) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port, path, rejectUnauthorized: false, ...opts, timeout: 30_000 },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

const lab = await labOrSkip(FILE);
const cloud = lab ? await cloudLabOrSkip(FILE) : undefined;
if (lab && cloud) {
  const k = (args: string[], opts: Parameters<typeof run>[2] = {}): Promise<Run> =>
    run('kubectl', ['--kubeconfig', cloud.adminKubeconfig, ...args], { timeoutMs: 60_000, ...opts });
  const kn = (args: string[], opts: Parameters<typeof run>[2] = {}) => k(['-n', NS, ...args], opts);
  const webPort = await freePort();
  let agent: TestAgent | undefined;
  let kubeletPort = 0;

  const image = lab.images.app;
  const c = (name: string, cmd: string, extra = '') =>
    `    - {name: ${name}, image: ${image}, imagePullPolicy: IfNotPresent, command: ["sh", "-c", ${JSON.stringify(cmd)}]${extra}}\n`;
  const pod = (name: string, spec: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: ${NS}\nspec:\n  nodeName: ${NODE}\n${spec}`;
  const pods = [
    pod(
      'talker',
      `  containers:\n${c('main', 'echo one; echo two; i=0; while true; do i=$((i+1)); echo tick $i; sleep 1; done')}`,
    ),
    // Exits 1 on its first run, sleeps on its second: the restart leaves a previous instance.
    pod(
      'phoenix',
      `  volumes: [{name: work, emptyDir: {}}]\n  containers:\n${c(
        'main',
        'n=$(( $(cat /work/n 2>/dev/null || echo 0) + 1 )); echo $n > /work/n; echo run $n; [ $n -ge 2 ] && exec sleep 3600; exit 1',
        ', volumeMounts: [{name: work, mountPath: /work}]',
      )}`,
    ),
    pod(
      'web',
      `  containers:\n${c('main', `mkdir -p /tmp/www && echo hello-through-the-tunnel > /tmp/www/index.html && exec httpd -f -p 127.0.0.1:${webPort} -h /tmp/www`)}`,
    ),
  ];

  test.before(async () => {
    await cloud.createNamespace(NS);
    agent = await startTestAgent({
      nodeName: NODE,
      runtimeEndpoint: lab.endpoint,
      flags: { cloud: cloud.nodeKubeconfig(NODE), kubeletPort: 0, nodeIp: '127.0.0.1' },
    });
  });

  test.after(async () => {
    await k(['delete', 'namespace', NS, '--wait=false']).catch(() => {});
    await agent?.stop();
    await cloud.stop();
    await lab.stop(); // its lease, else the containerd lab outlives the run
  });

  test('the Node reports the node API; its serving CSR, once approved, is what it serves', async () => {
    const port = await waitFor(
      async () => {
        const r = await k([
          'get',
          'node',
          NODE,
          '-o',
          'jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}',
        ]);
        return Number(r.stdout) || 0;
      },
      120_000,
      500,
    );
    assert.ok(port > 0, 'the Node reports a kubelet port');
    kubeletPort = port;
    const addresses = await k(['get', 'node', NODE, '-o', 'jsonpath={.status.addresses}']);
    assert.match(addresses.stdout, '"InternalIP"');
    assert.match(addresses.stdout, '127.0.0.1');
    const csr = await waitFor(
      async () => {
        const r = await k([
          'get',
          'csr',
          '--field-selector',
          'spec.signerName=kubernetes.io/kubelet-serving',
          '-o',
          `jsonpath={range .items[?(@.spec.username=="system:node:${NODE}")]}{.metadata.name}{"\\n"}{end}`,
        ]);
        return r.stdout.trim().split('\n').filter(Boolean)[0];
      },
      120_000,
      500,
    );
    assert.ok(csr, 'the node asked for a kubelet-serving certificate');
    const approved = await k(['certificate', 'approve', csr!]);
    assert.is(approved.code, 0, approved.stderr);
    // The API server verifies the node's certificate against the cluster CA (lab flag
    // --kubelet-certificate-authority): logs work only once the signed one is served.
    await kn(['apply', '-f', '-'], { input: pods.join('---\n') }).then((r) => assert.is(r.code, 0, r.stderr));
    const ok = await waitFor(
      async () => (await kn(['logs', 'talker'])).stdout.startsWith('one\ntwo\n'),
      120_000,
      500,
    );
    assert.ok(ok, (await kn(['logs', 'talker'])).stderr);
  });

  test('kubectl logs: --tail, --limit-bytes, -f', async () => {
    const tail = await kn(['logs', 'talker', '--limit-bytes=6']);
    assert.equal([tail.code, tail.stdout], [0, 'one\ntw'], tail.stderr);
    // --tail=1 prints one line from the file; a second line can only come from following it.
    const followed = await kn(['logs', '-f', '--tail=1', 'talker'], {
      untilStdout: /tick \d+\ntick \d+\n/,
      timeoutMs: 60_000,
    });
    assert.match(followed.stdout, /^tick \d+\ntick \d+\n/);
  });

  test('kubectl logs --previous after a restart', async () => {
    const prev = await waitFor(
      async () => {
        const r = await kn(['logs', '--previous', 'phoenix']);
        return r.code === 0 && r.stdout === 'run 1\n' ? r : undefined;
      },
      120_000,
      500,
    );
    assert.ok(prev, (await kn(['logs', '--previous', 'phoenix'])).stderr);
    const now = await kn(['logs', 'phoenix']);
    assert.is(now.stdout, 'run 2\n');
  });

  test('kubectl exec with stdin and an exit code', async () => {
    const r = await kn(
      ['exec', '-i', 'talker', '--', 'sh', '-c', 'read line; echo got $line; echo oops >&2; exit 3'],
      {
        input: 'hello\n',
      },
    );
    assert.is(r.code, 3, r.stderr);
    assert.is(r.stdout, 'got hello\n');
    assert.match(r.stderr, 'oops');
    const plain = await kn(['exec', 'talker', '--', 'echo', 'fine']);
    assert.equal([plain.code, plain.stdout], [0, 'fine\n'], plain.stderr);
  });

  test('kubectl port-forward carries a request into the pod', async () => {
    const ready = await waitFor(
      async () => (await kn(['get', 'pod', 'web', '-o', 'jsonpath={.status.phase}'])).stdout === 'Running',
      120_000,
      500,
    );
    assert.ok(ready);
    const local = await freePort();
    let body = '';
    // kubectl port-forward runs until stopped: started here, killed in `finally`.
    const forward = spawn(
      'kubectl',
      ['--kubeconfig', cloud.adminKubeconfig, '-n', NS, 'port-forward', 'pod/web', `${local}:${webPort}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    forward.stdout.on('data', (d) => (out += d));
    forward.stderr.on('data', (d) => (out += d));
    try {
      const got = await waitFor(
        async () => {
          try {
            const res = await fetch(`http://127.0.0.1:${local}/index.html`, {
              signal: AbortSignal.timeout(5_000),
            });
            body = await res.text();
            return res.ok;
          } catch {
            return false;
          }
        },
        60_000,
        500,
      );
      assert.ok(got, `no answer through the port forward: ${out}`);
      assert.is(body, 'hello-through-the-tunnel\n');
    } finally {
      const exited = new Promise((r) => forward.once('exit', r));
      forward.kill('SIGTERM');
      await exited;
    }
  });

  test('get --raw .../proxy/stats/summary and /metrics/resource through the API server', async () => {
    const summary = await waitFor(
      async () => {
        const r = await k(['get', '--raw', `/api/v1/nodes/${NODE}/proxy/stats/summary`]);
        if (r.code !== 0) return undefined;
        const s = JSON.parse(r.stdout) as {
          node: { nodeName: string };
          pods: { podRef: { name: string } }[];
        };
        return s.pods.some((p) => p.podRef.name === 'talker') ? s : undefined;
      },
      60_000,
      500,
    );
    assert.ok(summary, 'the summary lists the pods');
    assert.is(summary!.node.nodeName, NODE);
    const metrics = await k(['get', '--raw', `/api/v1/nodes/${NODE}/proxy/metrics/resource`]);
    assert.is(metrics.code, 0, metrics.stderr);
    assert.match(
      metrics.stdout,
      `container_memory_working_set_bytes{container="main",namespace="${NS}",pod="talker"}`,
    );
  });

  test("another node's certificate and an unauthenticated request are refused", async () => {
    const other = 'edge-other';
    cloud.nodeKubeconfig(other);
    const cert = readFileSync(join(cloud.dir, `node-${other}.crt`));
    const key = readFileSync(join(cloud.dir, `node-${other}.key`));
    assert.is(await nodeGet(kubeletPort, '/pods'), 401);
    assert.is(await nodeGet(kubeletPort, `/containerLogs/${NS}/talker/main`), 401);
    assert.is(await nodeGet(kubeletPort, '/pods', { cert, key }), 403);
    assert.is(await nodeGet(kubeletPort, '/stats/summary', { cert, key }), 403);
    const asNode = await run(
      'kubectl',
      ['--kubeconfig', cloud.nodeKubeconfig(other), '-n', NS, 'logs', 'talker'],
      { timeoutMs: 60_000 },
    );
    assert.is(asNode.code, 1);
    assert.match(asNode.stderr, 'Forbidden');
  });

  test('with the link down, a decision not cached is refused (fail closed); a cached one stands', async () => {
    const cert = readFileSync(join(cloud.dir, 'admin.crt'));
    const key = readFileSync(join(cloud.dir, 'admin.key'));
    assert.is(await nodeGet(kubeletPort, '/pods', { cert, key }), 200);
    await cloud.stopApiserver();
    try {
      assert.is(await nodeGet(kubeletPort, '/pods', { cert, key }), 200);
      assert.is(await nodeGet(kubeletPort, '/metrics', { cert, key }), 503);
      const token = await nodeGetWithToken(kubeletPort, '/pods', 'made-up-token');
      assert.is(token, 503);
    } finally {
      await cloud.startApiserver();
    }
  });

  test.run();
}

function nodeGetWithToken(port: number, path: string, token: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        rejectUnauthorized: false,
        headers: { authorization: `Bearer ${token}` },
        timeout: 30_000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
