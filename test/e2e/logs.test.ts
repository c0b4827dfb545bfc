// Container logs on a real containerd (the lab), through the real kubectl, `outpost logs` and plain HTTP.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import type { Status } from '#lib/kube/status.ts';
import { kubectl, outpost, startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { labOrSkip, waitFor } from '../helpers/lab.ts';

const lab = await labOrSkip('test/e2e/logs.test.ts');
if (lab) {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-logs-'));
  const ns = `logs-${Math.random().toString(36).slice(2, 7)}`;
  const cri = new CriClient({ endpoint: lab.endpoint });
  const image = lab.images.app;
  const c = (name: string, cmd: string, extra = '') =>
    `    - {name: ${name}, image: ${image}, imagePullPolicy: IfNotPresent, command: ["sh", "-c", ${JSON.stringify(cmd)}]${extra}}\n`;
  const pod = (name: string, spec: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n${spec}`;
  writeFileSync(
    join(dir, 'pods.yaml'),
    [
      pod('talker', `  containers:\n${c('main', 'echo one; echo two; echo three; exec sleep 3600')}`),
      pod(
        'ticker',
        `  containers:\n${c('main', 'i=0; while true; do i=$((i+1)); echo tick $i; sleep 1; done')}`,
      ),
      // One 40 000-byte line: containerd writes it as several partial (P) records.
      pod(
        'wide',
        `  containers:\n${c('main', "head -c 40000 /dev/zero | tr '\\0' x; echo; echo end; exec sleep 3600")}`,
      ),
      pod('brief', `  restartPolicy: Never\n  containers:\n${c('main', 'echo hello; sleep 4; echo bye')}`),
      pod(
        'duo',
        `  initContainers:\n${c('prep', 'echo prepared')}  containers:\n` +
          c('first', 'echo from first; exec sleep 3600') +
          c('second', 'echo from second; sleep 1; echo to stderr >&2; exec sleep 3600'),
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
    ].join('---\n'),
  );
  const agent: TestAgent = await startTestAgent({ manifests: dir, runtimeEndpoint: lab.endpoint });
  const get = (name: string) => agent.store.pods.get(ns, name);
  const running = (name: string) => waitFor(() => get(name)?.status?.phase === 'Running', 30_000);
  type RunOpts = Parameters<typeof kubectl>[2];
  const k = (args: string[], opts?: RunOpts) => kubectl(agent.url, ['-n', ns, 'logs', ...args], opts);
  const o = (args: string[], opts?: RunOpts) => outpost(['logs', '-s', agent.url, '-n', ns, ...args], opts);
  const status = async (query: string) => {
    const res = await fetch(`${agent.url}/api/v1/namespaces/${ns}/pods/${query}`, { headers: agent.admin });
    return { code: res.status, body: (await res.json()) as Status };
  };

  test('kubectl logs, --tail, --limit-bytes, --timestamps; outpost logs prints the same', async () => {
    assert.ok(await running('talker'));
    assert.ok(await waitFor(async () => (await k(['talker'])).stdout === 'one\ntwo\nthree\n'));
    const [tail, limit, stamped, mine, past, future] = await Promise.all([
      k(['talker', '--tail=2']),
      k(['talker', '--limit-bytes=6']),
      k(['talker', '--timestamps', '--since=1h']),
      o(['talker', '--tail', '2']),
      k(['talker', '--since-time=2000-01-01T00:00:00Z']),
      o(['talker', '--since-time', '2100-01-01T00:00:00Z']),
    ]);
    assert.equal([past.stdout, future.code, future.stdout], ['one\ntwo\nthree\n', 0, '']);
    assert.equal([tail.code, tail.stdout], [0, 'two\nthree\n'], tail.stderr);
    assert.is(limit.stdout, 'one\ntw');
    assert.match(
      stamped.stdout,
      /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d) (one|two|three)\n){3}$/,
    );
    assert.equal([mine.code, mine.stdout, mine.stderr], [0, 'two\nthree\n', '']);
    // The runtime's log file is under the pod's log directory in Outpost's data directory.
    const [ctr] = await cri.listContainers({
      labelSelector: { 'io.kubernetes.pod.name': 'talker', 'io.kubernetes.pod.namespace': ns },
    });
    assert.match((await cri.containerStatus(ctr!.id)).logPath, `${agent.dataDir}/logs/${ns}_talker_`);
  });

  test('a line longer than the runtime buffer comes back whole, stamped once', async () => {
    assert.ok(await waitFor(async () => (await k(['wide'])).stdout.endsWith('end\n')));
    const [plain, stamped] = await Promise.all([k(['wide']), k(['wide', '--timestamps'])]);
    assert.is(plain.stdout, `${'x'.repeat(40_000)}\nend\n`);
    assert.match(stamped.stdout, /^\S+ x{40000}\n\S+ end\n$/);
    const [ctr] = await cri.listContainers({
      labelSelector: { 'io.kubernetes.pod.name': 'wide', 'io.kubernetes.pod.namespace': ns },
    });
    const file = readFileSync((await cri.containerStatus(ctr!.id)).logPath, 'utf8');
    assert.ok(file.includes(' stdout P '), 'the runtime did split the line');
  });

  test('logs -f serves lines written after it started (kubectl and outpost)', async () => {
    assert.ok(await running('ticker'));
    assert.ok(await waitFor(async () => (await k(['ticker'])).stdout.includes('tick 1\n')));
    // --tail=1 prints one line from the file; any second line can only come from following it.
    const twoTicks = /^tick (\d+)\ntick (\d+)\n/;
    const runs = await Promise.all([
      k(['ticker', '-f', '--tail=1'], { untilStdout: twoTicks }),
      o(['ticker', '-f', '--tail=1'], { untilStdout: twoTicks }),
    ]);
    for (const r of runs) {
      const m = twoTicks.exec(r.stdout);
      assert.ok(m, `${r.stdout} ${r.stderr}`);
      assert.is(Number(m[2]), Number(m[1]) + 1);
    }
  });

  test('logs -f ends by itself when the container exits', async () => {
    // Usually still running (it sleeps 4 s); if not, the same bytes come without following.
    assert.ok(await waitFor(async () => (await k(['brief'])).stdout.startsWith('hello\n')));
    const [kf, of] = await Promise.all([k(['brief', '-f']), o(['brief', '-f'])]);
    assert.equal([kf.code, kf.stdout], [0, 'hello\nbye\n'], kf.stderr);
    assert.equal([of.code, of.stdout], [0, 'hello\nbye\n'], of.stderr);
  });

  test('several containers: -c, the default with kubectl’s notice, --all-containers, bad names', async () => {
    // stdout and stderr are read apart by the runtime: the second line comes a second later.
    assert.ok(await waitFor(async () => (await k(['duo', '-c', 'second'])).stdout.includes('to stderr')));
    const [second, plain, all, mine, nope, myNope] = await Promise.all([
      k(['duo', '-c', 'second']),
      k(['duo']),
      k(['duo', '--all-containers']),
      o(['duo', '--all-containers']),
      k(['duo', '-c', 'nope']),
      o(['duo', '-c', 'nope']),
    ]);
    assert.is(second.stdout, 'from second\nto stderr\n');
    assert.equal(
      [plain.stdout, plain.stderr],
      ['from first\n', 'Defaulted container "first" out of: first, second, prep (init)\n'],
    );
    // kubectl 1.32 walks the containers in map order (it varies); outpost puts init containers first.
    const lines = (t: string) => t.split('\n').sort().join('\n');
    assert.is(lines(all.stdout), lines('prepared\nfrom first\nfrom second\nto stderr\n'));
    assert.is(mine.stdout, 'prepared\nfrom first\nfrom second\nto stderr\n');
    assert.equal([nope.code, nope.stderr], [1, 'error: container nope is not valid for pod duo\n']);
    assert.equal([myNope.code, myNope.stderr], [nope.code, nope.stderr]);
    // The server's own answers, for clients that do not check first.
    const none = await status('duo/log');
    assert.equal(
      [none.code, none.body.message],
      [400, 'a container name must be specified for pod duo, choose one of: [prep first second]'],
    );
    const bad = await status('duo/log?container=nope');
    assert.equal(
      [bad.code, bad.body.reason, bad.body.message],
      [400, 'BadRequest', 'container nope is not valid for pod duo'],
    );
  });

  test('-p after a restart shows the previous run; without one it is a 400', async () => {
    assert.ok(await waitFor(() => get('phoenix')?.status?.containerStatuses?.[0]?.state?.running, 30_000));
    assert.ok(await waitFor(async () => (await k(['phoenix'])).stdout === 'run 2\n'));
    const [prev, mine, none, myNone] = await Promise.all([
      k(['phoenix', '-p']),
      o(['phoenix', '--previous']),
      k(['talker', '-p']),
      o(['talker', '-p']),
    ]);
    assert.equal([prev.code, prev.stdout], [0, 'run 1\n'], prev.stderr);
    assert.is(mine.stdout, 'run 1\n');
    const message =
      'Error from server (BadRequest): previous terminated container "main" in pod "talker" not found\n';
    assert.equal([none.code, none.stderr], [1, message]);
    assert.equal([myNone.code, myNone.stderr], [1, message]);
  });

  test('bad input: tailLines=abc is a 400 Status; unknown pods as kubectl words them', async () => {
    const bad = await status('talker/log?tailLines=abc');
    assert.equal([bad.code, bad.body.message], [400, 'invalid query: tailLines: must be an integer']);
    const [missing, myMissing] = await Promise.all([k(['ghost']), o(['ghost'])]);
    const message = `error: error from server (NotFound): pods "ghost" not found in namespace "${ns}"\n`;
    assert.equal([missing.code, missing.stderr], [1, message]);
    assert.equal([myMissing.code, myMissing.stderr], [1, message], myMissing.stdout);
  });

  test.after(async () => {
    await agent.stop();
    for (const s of await cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.namespace': ns } }))
      await cri.removePodSandbox(s.id).catch(() => {});
    cri.close();
    rmSync(dir, { recursive: true, force: true });
    await lab.stop();
  });
}
test.run();
