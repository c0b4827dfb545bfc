// Container log rotation on a real containerd (issue 18, item 4): a chatty container with a 4 KiB
// --container-log-max-size and 3 files kept. The runtime reopens its log through CRI
// ReopenContainerLog; `kubectl logs -f` started before the first rotation sees every line across
// all of them; `kubectl logs` and `--previous` serve the rotated files in order; the rotated files
// are gzipped, never more than 3 per container, and removed with their container.
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CriClient } from '#lib/cri/client.ts';
import { kubectl, startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { endLabSuite, labOrSkip, waitFor } from '../helpers/lab.ts';

const LINES = 300;

/** The numbers of `line N` records, and whether they run 1 by 1 without a gap or a repeat. */
function numbers(out: string): { first: number; last: number; contiguous: boolean } {
  const ns = [...out.matchAll(/^line (\d+) /gm)].map((m) => Number(m[1]));
  return {
    first: ns[0] ?? 0,
    last: ns.at(-1) ?? 0,
    contiguous: ns.length > 0 && ns.every((n, i) => i === 0 || n === ns[i - 1]! + 1),
  };
}

const lab = await labOrSkip('test/e2e/log-rotation.test.ts');
if (lab) {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-rotation-'));
  const ns = `rot-${Math.random().toString(36).slice(2, 7)}`;
  const cri = new CriClient({ endpoint: lab.endpoint });
  // Run 1: 300 numbered lines, ten a second (~60 bytes each: several 4 KiB rotations), then exits 1.
  // Run 2: one line, 30 s, exits 1; run 3 exits at once; run 4 sleeps. With run 4 running, two dead
  // instances are kept (lib/pods/worker/gc.ts): the first is collected.
  const script = [
    'n=$(( $(cat /work/n 2>/dev/null || echo 0) + 1 )); echo $n > /work/n',
    `if [ $n -eq 1 ]; then i=0; while [ $i -lt ${LINES} ]; do i=$((i+1)); echo "line $i ................................"; [ $((i % 10)) -eq 0 ] && sleep 1; done; echo done; exit 1; fi`,
    'echo run $n; [ $n -ge 4 ] && exec sleep 3600; [ $n -eq 2 ] && sleep 30; exit 1',
  ].join('; ');
  // Written when the test starts, not when the file is loaded: uvu loads every suite before it runs
  // any, and by this suite's turn the pod would have been through all its runs.
  const manifest = () =>
    writeFileSync(
      join(dir, 'chatty.yaml'),
      `apiVersion: v1
kind: Pod
metadata: {name: chatty, namespace: ${ns}}
spec:
  volumes: [{name: work, emptyDir: {}}]
  containers:
    - name: main
      image: ${lab.images.app}
      imagePullPolicy: IfNotPresent
      command: ["sh", "-c", ${JSON.stringify(script)}]
      volumeMounts: [{name: work, mountPath: /work}]
`,
    );
  const agent: TestAgent = await startTestAgent({
    manifests: dir,
    runtimeEndpoint: lab.endpoint,
    flags: { containerLogMaxSize: '4Ki', containerLogMaxFiles: '3', containerLogMonitorInterval: '300ms' },
  });
  const k = (args: string[], opts?: Parameters<typeof kubectl>[2]) =>
    kubectl(agent.url, ['-n', ns, 'logs', 'chatty', ...args], opts);
  const pod = () => agent.store.pods.get(ns, 'chatty');
  const logFiles = (attempt: number) => {
    const podDir = readdirSync(join(agent.dataDir, 'logs')).find((d) => d.startsWith(`${ns}_chatty_`));
    if (!podDir) return [];
    try {
      return readdirSync(join(agent.dataDir, 'logs', podDir, 'main'))
        .filter((f) => f.startsWith(`${attempt}.log`))
        .sort();
    } catch {
      return [];
    }
  };

  test('logs -f follows across rotations; logs and --previous serve the rotated files; at most 3 files', async () => {
    manifest();
    assert.ok(await waitFor(() => pod()?.status?.containerStatuses?.[0]?.state?.running, 60_000));
    // Started at once, long before 4 KiB are written: it must see every line through every rotation.
    const followed = k(['-f'], { untilStdout: /^done$/m, timeoutMs: 180_000 });
    let most = 0;
    const watchFiles = setInterval(() => {
      most = Math.max(most, logFiles(0).length);
    }, 50);
    const f = await followed;
    clearInterval(watchFiles);
    const seen = numbers(f.stdout);
    assert.equal([seen.first, seen.last, seen.contiguous], [1, LINES, true], f.stdout.slice(-500));
    // The first run ended (exit 1); its files stay for --previous, the oldest ones rotated away.
    assert.ok(await waitFor(() => (pod()?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 120_000));
    const files = logFiles(0);
    assert.ok(files.length <= 3 && most <= 3, `at most 3 files: ${files} (most seen ${most})`);
    assert.ok(
      files.some((n) => /^0\.log\.\d{8}-\d{6}\.gz$/.test(n)),
      `a compressed rotated file: ${files}`,
    );
    assert.ok(files.includes('0.log'), `${files}`);
    const prev = await waitFor(async () => {
      const r = await k(['--previous']);
      return r.stdout.endsWith('done\n') ? r : undefined;
    }, 120_000);
    assert.ok(prev, 'logs --previous shows the first run');
    const p = numbers(prev!.stdout);
    assert.ok(p.contiguous, prev!.stdout);
    assert.is(p.last, LINES);
    assert.ok(p.first > 1, `the oldest lines were rotated away (first line ${p.first})`);
    const now = await k([]);
    assert.is(now.stdout, 'run 2\n', now.stderr);
  });

  test('the rotated files go with their container', async () => {
    // Run 4 starts after two more back-offs (20 s, 40 s); the collector then removes run 1 and its logs.
    assert.ok(await waitFor(() => (pod()?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 3, 240_000));
    assert.ok(await waitFor(() => logFiles(0).length === 0, 120_000), `run 1's files: ${logFiles(0)}`);
    assert.ok(logFiles(1).length >= 1, 'the previous run keeps its log');
  });

  test.after(async () => {
    await endLabSuite({ agent, cri, ns, dir, lab });
  });
}
test.run();
