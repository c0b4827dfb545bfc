// Recovery on a real containerd, with Outpost as production runs it (the bundle, a child process):
// kill -9 and a restart adopt every pod; a power cut of the runtime, or its state wiped, brings
// every pod back with its network (one IP lease and one network namespace per pod, no leaks); a
// sandbox whose pause process died is replaced and its network released; system-critical pods
// start first; a fresh metabase deletes nothing it finds.
// The suite runs its own lab (OUTPOST_RECOVERY_LAB, default /tmp/outpost-lab-recovery): cutting
// the power of the shared one would kill other suites' pods.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { Pod } from '#lib/kube/types.ts';
import type { Event } from '#lib/store/events.ts';
import { labLeaseDir, labNetwork, powerCut, stopLab } from '../../scripts/lab.ts';
import { kubectl } from '../helpers/agent.ts';
import { labOrSkip, waitFor } from '../helpers/lab.ts';
import { ensureBundle, type OutpostProcess, spawnOutpost } from '../helpers/outpost-process.ts';

const LAB = { dir: process.env.OUTPOST_RECOVERY_LAB ?? '/tmp/outpost-lab-recovery', log: () => {} };
const lab = await labOrSkip('test/e2e/recovery.test.ts', { ...LAB, keep: true });
if (lab) {
  ensureBundle();
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-recovery-'));
  const suffix = Math.random().toString(36).slice(2, 7);
  const ns = `rec-${suffix}`;
  const otherNs = `rec-${suffix}-other`;
  const manifests = join(dir, 'manifests');
  const dataDir = join(dir, 'data');
  mkdirSync(manifests);
  let cri = new CriClient({ endpoint: lab.endpoint });
  const image = lab.images.app;
  const pod = (name: string, namespace: string, spec: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\nspec:\n  terminationGracePeriodSeconds: 1\n${spec}`;
  const main = (cmd: string, extra = '') =>
    `  containers:\n    - name: main\n      image: ${image}\n      imagePullPolicy: IfNotPresent\n      command: ["sh", "-c", ${JSON.stringify(cmd)}]\n${extra}`;
  // The critical pod sorts last by name: only its priority class can make it start first.
  const names = ['flaky', 'web-a', 'web-b', 'with-init', 'z-critical'];
  writeFileSync(
    join(manifests, 'pods.yaml'),
    [
      // Serves on its pod IP: networking must come back with the pod.
      pod(
        'web-a',
        ns,
        main('mkdir -p /www && echo web-a > /www/index.html && exec httpd -f -p 8080 -h /www'),
      ),
      pod('web-b', ns, main('exec sleep 3600')),
      // Fails once, then runs: restartCount 1, kept in an emptyDir that outlives the sandbox.
      pod(
        'flaky',
        ns,
        `  volumes: [{name: work, emptyDir: {}}]\n${main(
          'test -f /work/ran && exec sleep 3600; touch /work/ran; exit 1',
          '      volumeMounts: [{name: work, mountPath: /work}]\n',
        )}`,
      ),
      pod(
        'with-init',
        ns,
        `  initContainers:\n    - {name: setup, image: ${image}, imagePullPolicy: IfNotPresent, command: ["true"]}\n${main('exec sleep 3600')}`,
      ),
      pod('z-critical', ns, `  priorityClassName: system-node-critical\n${main('exec sleep 3600')}`),
    ].join('\n---\n'),
  );
  const started: OutpostProcess[] = [];
  const start = async (o: { dataDir?: string; manifests?: string | undefined } = {}) => {
    const p = await spawnOutpost({
      dataDir: o.dataDir ?? dataDir,
      runtimeEndpoint: lab.endpoint,
      nodeName: 'rec-node',
      ...('manifests' in o ? (o.manifests ? { manifests: o.manifests } : {}) : { manifests }),
    });
    started.push(p);
    return p;
  };

  const podsOf = async (p: OutpostProcess, namespace = ns): Promise<Pod[]> => {
    const res = await fetch(`${p.url}/api/v1/namespaces/${namespace}/pods`);
    return ((await res.json()) as { items: Pod[] }).items;
  };
  const eventsOf = async (p: OutpostProcess): Promise<Event[]> => {
    const res = await fetch(`${p.url}/api/v1/namespaces/${ns}/events`);
    return ((await res.json()) as { items: Event[] }).items;
  };
  const up = (p: Pod) =>
    p.status?.phase === 'Running' &&
    (p.status.containerStatuses ?? []).every((s) => s.state?.running && s.ready);
  /** name → [containerID, restartCount] of the app containers. */
  const containersOf = (pods: Pod[]) =>
    Object.fromEntries(
      pods.map((p) => [
        p.metadata.name!,
        (p.status?.containerStatuses ?? []).map((s) => [s.containerID, s.restartCount] as const),
      ]),
    );
  /** Every pod up, and (when given) with none of these container IDs. */
  const allUp = (p: OutpostProcess, notIds: Set<string> = new Set()) =>
    waitFor(async () => {
      const pods = await podsOf(p);
      const ok =
        pods.length === names.length &&
        pods.every(
          (x) => up(x) && (x.status?.containerStatuses ?? []).every((s) => !notIds.has(s.containerID ?? '')),
        );
      return ok && pods;
    }, 90_000);
  const idsOf = (pods: Pod[]) =>
    new Set(pods.flatMap((p) => (p.status?.containerStatuses ?? []).map((s) => s.containerID ?? '')));
  const runtime = async () => {
    const labelSelector = { 'io.kubernetes.pod.namespace': ns };
    const [sandboxes, containers] = await Promise.all([
      cri.listPodSandbox({ labelSelector }),
      cri.listContainers({ labelSelector }),
    ]);
    const pod = (l: Record<string, string>) => l['io.kubernetes.pod.name'] ?? '';
    return {
      sandboxes: sandboxes
        .map((s) => ({
          id: s.id,
          pod: pod(s.labels),
          state: s.state,
          attempt: s.metadata?.attempt ?? 0,
          createdAt: BigInt(s.createdAt),
        }))
        .sort((a, b) => a.id.localeCompare(b.id)),
      containers: containers
        .map((c) => ({ id: c.id, pod: pod(c.labels), name: c.metadata?.name, state: c.state }))
        .sort((a, b) => a.id.localeCompare(b.id)),
    };
  };
  /** kubectl's NAME, READY, STATUS and RESTARTS (without the "(5s ago)" that moves with time). */
  const kubectlRows = async (p: OutpostProcess) => {
    const r = await kubectl(p.url, ['get', 'pods', '-n', ns, '--no-headers']);
    assert.is(r.code, 0, r.stderr);
    return r.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/).slice(0, 4).join(' '));
  };
  const eventCounts = (events: Event[]) =>
    Object.fromEntries(
      events.map((e) => [`${e.involvedObject.name} ${e.reason} ${e.message}`, e.count] as const),
    );

  /** Host-local's leases and the runtime's network namespaces in the lab, and each pod IP's answer. */
  const leaseDir = join(labLeaseDir(LAB.dir), labNetwork(LAB.dir).name);
  const netnsDir = join(resolve(LAB.dir), 'state', 'io.containerd.grpc.v1.cri', 'netns');
  const count = (d: string, re = /./) =>
    existsSync(d) ? readdirSync(d).filter((f) => re.test(f)).length : 0;
  /** One lease and one network namespace per pod, distinct pod IPs, and web-a answering on its IP. */
  const networkSound = async (pods: Pod[]) => {
    const ips = pods.map((p) => p.status?.podIP ?? '');
    assert.is(new Set(ips.filter(Boolean)).size, names.length, `distinct pod IPs: ${ips}`);
    const settled = await waitFor(
      () => count(leaseDir, /^\d+\.\d+\.\d+\.\d+$/) === names.length && count(netnsDir) === names.length,
      60_000,
    );
    assert.ok(settled, `leases ${readdirSync(leaseDir)}, netns ${count(netnsDir)}: no leaks`);
    const web = pods.find((p) => p.metadata.name === 'web-a')?.status?.podIP;
    const body = await waitFor(
      () =>
        fetch(`http://${web}:8080/index.html`, { signal: AbortSignal.timeout(5_000) }).then(
          (r) => r.text(),
          () => '',
        ),
      60_000,
      500,
    );
    assert.is(body, 'web-a\n', `web-a on ${web}:8080`);
  };

  let outpost = await start();

  test('kill -9 with pods running: the restarted agent adopts every pod, nothing restarts', async () => {
    const before = await waitFor(async () => {
      const pods = await allUp(outpost);
      return (
        pods &&
        pods.find((p) => p.metadata.name === 'flaky')?.status?.containerStatuses?.[0]?.restartCount === 1 &&
        pods
      );
    }, 90_000);
    assert.ok(before, JSON.stringify(containersOf(await podsOf(outpost))));
    const rtBefore = await runtime();
    const rowsBefore = await kubectlRows(outpost);
    const eventsBefore = eventCounts(await eventsOf(outpost));
    assert.is(
      rowsBefore.find((r) => r.startsWith('flaky ')),
      'flaky 1/1 Running 1',
    );

    await outpost.kill9();
    outpost = await start();
    await outpost.ready(); // every pod had its first sync

    const rtAfter = await runtime();
    assert.equal(rtAfter.sandboxes, rtBefore.sandboxes, 'no new sandbox, none stopped');
    assert.equal(rtAfter.containers, rtBefore.containers, 'no new container, none stopped');
    const after = await podsOf(outpost);
    assert.ok(after.every(up), JSON.stringify(containersOf(after)));
    assert.equal(containersOf(after), containersOf(before), 'same container IDs and restart counts');
    assert.equal(await kubectlRows(outpost), rowsBefore);
    assert.equal(eventCounts(await eventsOf(outpost)), eventsBefore, 'no Created, Started or Killing since');
    await networkSound(after);
  });

  test('a sandbox whose pause process dies is replaced, its network namespace and IP lease released', async () => {
    const before = (await allUp(outpost)) || [];
    const old = (await runtime()).sandboxes.find((s) => s.pod === 'web-a' && s.state === 'SANDBOX_READY')!;
    const tasks = execFileSync('ctr', ['--address', lab.socket, '-n', 'k8s.io', 'task', 'ls'], {
      encoding: 'utf8',
    });
    const pid = Number(
      /^(\S+)\s+(\d+)/m.exec(tasks.split('\n').find((l) => l.startsWith(old.id)) ?? '')?.[2],
    );
    assert.ok(pid > 0, tasks);
    process.kill(pid, 'SIGKILL');
    const after = await waitFor(async () => {
      const rt = await runtime();
      const fresh = rt.sandboxes.some(
        (s) => s.pod === 'web-a' && s.state === 'SANDBOX_READY' && s.id !== old.id,
      );
      const pods = fresh && (await allUp(outpost, idsOf(before.filter((p) => p.metadata.name === 'web-a'))));
      return pods;
    }, 120_000);
    assert.ok(
      after,
      JSON.stringify(await runtime(), (_, v) => (typeof v === 'bigint' ? String(v) : v)),
    );
    await networkSound(after);
  });

  test('a power cut of the runtime: every pod comes back, critical first, restart counts go on', async () => {
    const before = (await allUp(outpost)) || [];
    const old = await runtime();
    const restarts = containersOf(before);
    await outpost.kill9();
    await powerCut(LAB);
    cri.close();
    cri = new CriClient({ endpoint: lab.endpoint });
    const cut = await runtime();
    assert.ok(
      cut.sandboxes.every((s) => s.state === 'SANDBOX_NOTREADY'),
      'the runtime still lists the dead sandboxes',
    );

    outpost = await start();
    const after = await allUp(outpost, idsOf(before));
    assert.ok(after, JSON.stringify(containersOf(await podsOf(outpost))));
    for (const p of after) {
      const was = restarts[p.metadata.name!]!;
      const now = containersOf([p])[p.metadata.name!]!;
      assert.equal(
        now.map(([, n]) => n),
        was.map(([, n]) => n + 1),
        `${p.metadata.name}: a new instance continues the restart count`,
      );
    }
    const rt = await runtime();
    const fresh = rt.sandboxes.filter((s) => !old.sandboxes.some((o) => o.id === s.id));
    assert.equal(fresh.map((s) => s.pod).sort(), [...names].sort(), 'one new sandbox per pod');
    const lastAttempt = (pod: string) =>
      Math.max(...old.sandboxes.filter((o) => o.pod === pod).map((o) => o.attempt));
    assert.ok(fresh.every((s) => s.state === 'SANDBOX_READY' && s.attempt === lastAttempt(s.pod) + 1));
    // (c) The system-node-critical pod's sandbox was created before any other.
    const critical = fresh.find((s) => s.pod === 'z-critical')!;
    for (const s of fresh)
      if (s !== critical)
        assert.ok(critical.createdAt < s.createdAt, `z-critical's sandbox before ${s.pod}'s`);
    const rows = await kubectlRows(outpost);
    for (const r of rows) assert.match(r, / 1\/1 Running /);
    await networkSound(after);
  });

  test('the runtime wiped under a running agent: every pod comes back without an agent restart', async () => {
    const before = (await allUp(outpost)) || [];
    const old = await runtime();
    // Root and state gone: the runtime comes back empty, its images imported again only after
    // containerd answers (the agent may try first: ErrImagePull, and it retries).
    await powerCut({ ...LAB, wipe: true });
    cri.close();
    cri = new CriClient({ endpoint: lab.endpoint });
    const left = await runtime();
    assert.ok(!left.sandboxes.some((s) => old.sandboxes.some((o) => o.id === s.id)), 'the runtime is empty');
    const after = await allUp(outpost, idsOf(before));
    assert.ok(after, JSON.stringify(containersOf(await podsOf(outpost))));
    const restarts = containersOf(before);
    for (const p of after) {
      assert.equal(
        containersOf([p])[p.metadata.name!]!.map(([, n]) => n),
        restarts[p.metadata.name!]!.map(([, n]) => n + 1),
        `${p.metadata.name}: restart count continued from the stored status`,
      );
    }
    const rt = await runtime();
    assert.is(rt.sandboxes.length, names.length, 'one sandbox per pod');
    await networkSound(after);
  });

  test('a fresh metabase leaves the pods it finds running alone and deletes nothing', async () => {
    const before = await runtime();
    assert.ok(before.sandboxes.every((s) => s.state === 'SANDBOX_READY'));
    await outpost.kill9();
    const foreign = (logs: string) =>
      logs
        .split('\n')
        .filter((l) => l.includes('runtime pod not in the metabase: left alone') && l.includes(`"${ns}/`));
    // An empty data directory and no manifests at all.
    const empty = await start({ dataDir: join(dir, 'empty'), manifests: undefined });
    await empty.ready();
    // The garbage collector runs with the first relist after start-up, and logs what it leaves.
    await waitFor(() => foreign(empty.logs()).length >= names.length);
    assert.is(foreign(empty.logs()).length, names.length, empty.logs());
    assert.is((await podsOf(empty)).length, 0, 'nothing adopted into the new metabase');
    await empty.kill9();
    // A new metabase with a pod of its own: it runs that one and leaves the others.
    const own = join(dir, 'own-manifests');
    mkdirSync(own);
    writeFileSync(join(own, 'pod.yaml'), pod('newcomer', otherNs, main('exec sleep 3600')));
    const other = await start({ dataDir: join(dir, 'other'), manifests: own });
    await other.ready();
    const newcomer = await waitFor(async () => (await podsOf(other, otherNs)).find(up));
    assert.ok(newcomer, 'its own pod runs');
    await waitFor(() => foreign(other.logs()).length >= names.length);
    assert.is(foreign(other.logs()).length, names.length, other.logs());
    await other.kill9();
    assert.equal(await runtime(), before, 'every sandbox and container still there, still running');
    outpost = await start();
  });

  test.after(async () => {
    for (const p of started) await p.kill9();
    cri.close();
    rmSync(dir, { recursive: true, force: true });
    await stopLab(LAB); // the suite's own lab: its pods go with it
  });
}
test.run();
