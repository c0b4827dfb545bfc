// Pod networking on the real containerd and Debian's CNI plugins (the lab's bridge + host-local +
// portmap): two pods on the same port, each Ready on its own IP and reachable from the node; a
// hostPort; `kubectl port-forward` (the real kubectl: its WebSocket tunnel and SPDY) into a pod
// network and a host-network pod, and its errors; the runtime's NetworkReady in /readyz?verbose
// and `outpost doctor`.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import { labNetwork } from '../../scripts/lab.ts';
import { kubectl, outpost, startTestAgent } from '../helpers/agent.ts';
import { endLabSuite, labOrSkip, waitFor } from '../helpers/lab.ts';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** The body of a GET, or '' when nothing answers. */
const body = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(5_000) }).then(
    (r) => (r.ok ? r.text() : ''),
    () => '',
  );

const lab = await labOrSkip('test/e2e/pod-network.test.ts');
if (lab) {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-net-'));
  const ns = `net-${Math.random().toString(36).slice(2, 7)}`;
  const cri = new CriClient({ endpoint: lab.endpoint });
  const image = lab.images.app;
  const [hostPort, hostNetPort] = [await freePort(), await freePort()];
  const serve = (text: string, port: number | string) =>
    `mkdir -p /www && echo ${text} > /www/index.html && exec httpd -f -p ${port} -h /www`;
  const pod = (name: string, spec: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n  terminationGracePeriodSeconds: 1\n${spec}`;
  const main = (cmd: string, extra = '') =>
    `  containers:\n    - name: main\n      image: ${image}\n      imagePullPolicy: IfNotPresent\n      command: ["sh", "-c", ${JSON.stringify(cmd)}]\n${extra}`;
  const ready = (port: number) =>
    `      readinessProbe:\n        httpGet: {path: /index.html, port: ${port}}\n        periodSeconds: 1\n`;
  writeFileSync(
    join(dir, 'pods.yaml'),
    [
      // The same port in two pods: each has its own network namespace.
      pod('a', main(serve('a', 8080), ready(8080))),
      pod('b', main(serve('b', 8080), ready(8080))),
      pod(
        'hp',
        main(serve('hp', 80), `      ports: [{containerPort: 80, hostPort: ${hostPort}}]\n${ready(80)}`),
      ),
      pod('hn', `  hostNetwork: true\n${main(serve('hn', hostNetPort), ready(hostNetPort))}`),
      // Never leaves Pending: its init container does not end.
      pod(
        'pending',
        `  initContainers:\n    - {name: wait, image: ${image}, imagePullPolicy: IfNotPresent, command: ["sleep", "3600"]}\n${main('exec sleep 3600')}`,
      ),
    ].join('\n---\n'),
  );
  const agent = await startTestAgent({ manifests: dir, runtimeEndpoint: lab.endpoint });
  const get = async (name: string) =>
    (await (await fetch(`${agent.url}/api/v1/namespaces/${ns}/pods/${name}`)).json()) as Pod;
  const readyPod = (name: string) =>
    waitFor(async () => {
      const p = await get(name);
      return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && p;
    }, 120_000);
  const subnet = labNetwork(process.env.OUTPOST_LAB_DIR ?? '').subnet.replace(/\d+\/24$/, '');

  /** Runs `kubectl port-forward` until `fn` is done with the local port; returns kubectl's output. */
  async function forward(
    target: string,
    remote: number,
    fn: (local: number) => Promise<void>,
    o: { args?: string[]; env?: Record<string, string> } = {},
  ): Promise<string> {
    const local = await freePort();
    const child = spawn(
      'kubectl',
      [
        // As the admin (the admin kubeconfig, over https): port-forward needs a credential.
        `--kubeconfig=${agent.kubeconfig}`,
        '-n',
        ns,
        'port-forward',
        `pod/${target}`,
        `${local}:${remote}`,
        ...(o.args ?? []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: dir, ...o.env } },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise((r) => child.once('exit', r));
    try {
      await waitFor(() => out.includes('Forwarding from'), 60_000);
      await fn(local);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    return out;
  }

  test('two pods listening on the same port are both Ready, on distinct IPs of the pod network, each reachable', async () => {
    const [a, b] = [await readyPod('a'), await readyPod('b')];
    assert.ok(a && b, JSON.stringify([(await get('a')).status, (await get('b')).status]));
    const [ipA, ipB] = [a.status?.podIP ?? '', b.status?.podIP ?? ''];
    assert.ok(ipA.startsWith(subnet) && ipB.startsWith(subnet) && ipA !== ipB, `${ipA} ${ipB} in ${subnet}`);
    assert.equal(a.status?.podIPs, [{ ip: ipA }]);
    assert.is.not(ipA, a.status?.hostIP);
    assert.is(await body(`http://${ipA}:8080/index.html`), 'a\n');
    assert.is(await body(`http://${ipB}:8080/index.html`), 'b\n');
    const wide = await kubectl(agent.url, ['get', 'pods', '-n', ns, '-o', 'wide']);
    assert.match(wide.stdout, ipA);
    // A host-network pod keeps the node's address.
    const hn = await readyPod('hn');
    assert.ok(hn);
    assert.is(hn.status?.podIP, hn.status?.hostIP);
  });

  test('a hostPort reaches the pod through the node', async () => {
    const hp = await readyPod('hp');
    assert.ok(hp, JSON.stringify((await get('hp')).status));
    const got = await waitFor(() => body(`http://${hp.status?.hostIP}:${hostPort}/index.html`), 60_000, 500);
    assert.is(got, 'hp\n');
  });

  test('kubectl port-forward carries a request into a pod network (WebSocket tunnel) and into a host-network pod (SPDY)', async () => {
    assert.ok(await readyPod('a'));
    let got = '';
    // -v=7 logs the tunnel's negotiation, and a fallback to SPDY (a POST) when the tunnel fails.
    const out = await forward(
      'a',
      8080,
      async (local) => {
        got = await waitFor(() => body(`http://127.0.0.1:${local}/index.html`), 60_000, 500);
      },
      { args: ['-v=7'] },
    );
    assert.is(got, 'a\n', out);
    assert.match(out, /GET http\S+\/pods\/a\/portforward/, out);
    assert.match(out, 'negotiated protocol: portforward.k8s.io', out);
    assert.not.match(out, /fallback|POST http\S+\/portforward/, out);
    let hn = '';
    const spdy = await forward(
      'hn',
      hostNetPort,
      async (local) => {
        hn = await waitFor(() => body(`http://127.0.0.1:${local}/index.html`), 60_000, 500);
      },
      { args: ['-v=7'], env: { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' } },
    );
    assert.is(hn, 'hn\n', spdy);
    assert.match(spdy, /POST http\S+\/pods\/hn\/portforward/, spdy);
  });

  test('port-forward errors as kubectl shows them: nothing listening, a pod not running, no such pod', async () => {
    const out = await forward('b', 9, async (local) => {
      assert.is(await body(`http://127.0.0.1:${local}/`), '');
    });
    assert.match(out, /error forwarding port 9|connection refused/);
    const pending = await kubectl(agent.url, ['-n', ns, 'port-forward', 'pod/pending', '18080:80']);
    assert.is(pending.code, 1);
    assert.match(pending.stderr, 'unable to forward port because pod is not running. Current status=Pending');
    const none = await kubectl(agent.url, ['-n', ns, 'port-forward', 'pod/nope', '18080:80']);
    assert.is(none.code, 1);
    assert.match(none.stderr, 'pods "nope" not found');
  });

  test('/readyz?verbose and outpost doctor report the runtime network ready', async () => {
    const readyz = await waitFor(async () => {
      const text = await (await fetch(`${agent.url}/readyz?verbose`)).text();
      return text.includes('runtime-network') && text;
    }, 60_000);
    assert.match(readyz || '', '[+]runtime-network ok (runtime NetworkReady: pods get their own network)');
    const doctor = await outpost(['doctor', '--data-dir', agent.dataDir, '--runtime-endpoint', lab.endpoint]);
    assert.match(doctor.stdout, `runtime ${lab.endpoint}: containerd`);
    assert.match(doctor.stdout, 'RuntimeReady; runtime NetworkReady: pods get their own network');
  });

  test.after(async () => {
    await endLabSuite({ agent, cri, ns, dir, lab });
  });
}
test.run();
