// kill -9 in the middle of a mixed write workload, over and over, on one data directory: the bundle
// runs two pods on containerd and a device of the reference mapper; clients restart the pods (each
// restart is an audit row and brings status changes) and edit the device's desired value (a
// device write and an audit row) concurrently; after some acknowledged writes the agent is killed
// with requests in flight. After each kill the metabase file must pass `PRAGMA integrity_check`
// and hold every acknowledged write; after each start the pods must be adopted with restart counts
// that never go back. Used by test/e2e/kill-loop.test.ts (a few rounds) and `npm run soak`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { CriClient } from '#lib/cri/client.ts';
import type { VirtualMapper } from '#lib/dmi/virtual-mapper.ts';
import type { Device } from '#lib/kube/devices.ts';
import type { Pod } from '#lib/kube/types.ts';
import type { Lab } from '../../scripts/lab.ts';
import { DEVICES, device, startMapper, writeDevices } from './devices.ts';
import { removeSandboxes, waitFor } from './lab.ts';
import { type OutpostProcess, spawnOutpost } from './outpost-process.ts';

export interface KillLoopOptions {
  lab: Lab;
  iterations: number;
  /** One line per round. */
  progress?: (line: string) => void;
}

export interface KillLoopResult {
  rounds: number;
  restartsAcked: number;
  editsAcked: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the loop; throws an Error naming the round and what was lost or damaged. */
export async function runKillLoop(o: KillLoopOptions): Promise<KillLoopResult> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-kill-loop-'));
  const ns = `kill-${Math.random().toString(36).slice(2, 7)}`;
  const data = join(dir, 'data');
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests);
  const pod = (name: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${o.lab.images.app}\n      imagePullPolicy: IfNotPresent\n      command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]\n`;
  writeFileSync(join(manifests, 'pods.yaml'), [pod('a'), pod('b')].join('---\n'));
  // The device lives in this agent's own metabase: `default/thermo` clashes with no other suite.
  writeDevices(manifests, [device('thermo', 'virtual')]);
  const cri = new CriClient({ endpoint: o.lab.endpoint });
  let agent: OutpostProcess | undefined;
  let mapper: VirtualMapper | undefined;
  let restartsAcked = 0;
  let editsAcked = 0;
  /** The last acknowledged desired value, and values sent but not acknowledged since. */
  let lastEdit: string | undefined;
  let pendingEdits = new Set<string>();
  const maxRestarts = new Map<string, number>();
  let seq = 0;
  const restartCodes = new Map<number, number>();
  try {
    for (let round = 1; round <= o.iterations; round++) {
      agent = await spawnOutpost({
        dataDir: data,
        runtimeEndpoint: o.lab.endpoint,
        nodeName: 'kill-node',
        manifests,
        args: ['--snapshot-interval', '0'],
      });
      const url = agent.url;
      const admin = agent.admin;
      mapper ??= await startMapper(join(dir, 'mapper.sock'), join(data, 'dmi.sock'));
      await agent.ready(120_000);
      // Pods adopted: running, restart counts never lower than any seen before.
      const pods = await waitFor(async () => {
        const items = (
          (await (await fetch(`${url}/api/v1/namespaces/${ns}/pods`)).json()) as { items: Pod[] }
        ).items;
        const up =
          items.length === 2 &&
          items.every(
            (p) => p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.state?.running,
          );
        return up && items;
      }, 120_000);
      if (!pods) throw new Error(`round ${round}: the pods did not run again:\n${agent.logs()}`);
      for (const p of pods) {
        const n = p.status!.containerStatuses![0]!.restartCount;
        const before = maxRestarts.get(p.metadata.name!) ?? 0;
        if (n < before)
          throw new Error(
            `round ${round}: pod ${p.metadata.name} restartCount went back from ${before} to ${n}`,
          );
        maxRestarts.set(p.metadata.name!, n);
      }
      // The mapper answers edits again (it registered with an earlier agent; this one reloads it).
      const edit = async (value: string) => {
        const res = await fetch(`${url}${DEVICES}/thermo`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/merge-patch+json', ...admin },
          body: JSON.stringify({
            spec: {
              properties: [
                { name: 'temperature', reportCycle: 200000000 },
                { name: 'target-temperature', desired: { value }, reportCycle: 200000000 },
                { name: 'switch', desired: { value: 'true' }, reportCycle: 200000000 },
              ],
            },
          }),
        });
        return res.status;
      };
      // 5.0 ... 34.9, within the model's range; unique within 300 edits.
      const nextValue = () => (5 + (seq++ % 300) / 10).toFixed(1);
      const ready = await waitFor(
        async () => {
          const v = nextValue();
          pendingEdits.add(v);
          const code = await edit(v).catch(() => 0);
          if (code === 200) {
            lastEdit = v;
            pendingEdits = new Set();
            editsAcked++;
          }
          return code === 200;
        },
        120_000,
        500,
      );
      if (!ready) throw new Error(`round ${round}: device edits never went through:\n${agent.logs()}`);

      // The workload: restarts and edits at once, until enough are acknowledged; then kill -9.
      const target = 6 + (round % 4) * 2;
      let acked = 0;
      let restarted = 0;
      let stop = false;
      const restarter = (async () => {
        for (let i = 0; !stop; i++) {
          const name = i % 2 ? 'a' : 'b';
          const code = await fetch(`${url}/api/v1/namespaces/${ns}/pods/${name}/restart`, {
            method: 'POST',
            headers: admin,
          }).then(
            (r) => r.status,
            () => 0,
          );
          if (code === 0) return;
          restartCodes.set(code, (restartCodes.get(code) ?? 0) + 1);
          if (code === 200) {
            restartsAcked++;
            restarted++;
            acked++;
          }
          await sleep(100); // a 409 while a container is not running yet, for instance
        }
      })();
      const editor = (async () => {
        while (!stop) {
          const v = nextValue();
          pendingEdits.add(v);
          const code = await edit(v).catch(() => 0);
          if (code === 200) {
            lastEdit = v;
            pendingEdits = new Set();
            editsAcked++;
            acked++;
          } else if (code === 0) return;
        }
      })();
      // Both kinds in every round (a restart takes longer: it stops containers).
      await waitFor(() => acked >= target && restarted >= 2, 120_000, 20);
      await agent.kill9();
      stop = true;
      await Promise.all([restarter, editor]);

      // The file as the kill left it (WAL included): sound, every acknowledged write there.
      const db = new Database(join(data, 'outpost.db'), { readonly: true });
      try {
        const check = db.pragma('integrity_check') as { integrity_check: string }[];
        if (check.length !== 1 || check[0]!.integrity_check !== 'ok')
          throw new Error(`round ${round}: integrity_check: ${JSON.stringify(check)}`);
        const count = (like: string, method: string) =>
          (
            db
              .prepare('SELECT count(*) AS n FROM audit WHERE path LIKE ? AND verb = ? AND code = 200')
              .get(like, method) as { n: number }
          ).n;
        const restarts = count(`%/namespaces/${ns}/pods/%/restart`, 'POST');
        if (restarts < restartsAcked)
          throw new Error(
            `round ${round}: ${restartsAcked} restarts acknowledged, ${restarts} in the audit trail`,
          );
        const edits = count('%/namespaces/default/devices/thermo', 'PATCH');
        if (edits < editsAcked)
          throw new Error(
            `round ${round}: ${editsAcked} device edits acknowledged, ${edits} in the audit trail`,
          );
        const row = db
          .prepare('SELECT object FROM devices WHERE namespace = ? AND name = ?')
          .get('default', 'thermo') as {
          object: string;
        };
        const stored = (JSON.parse(row.object) as Device).spec.properties?.find(
          (p) => p.name === 'target-temperature',
        )?.desired?.value;
        if (stored !== lastEdit && !pendingEdits.has(stored ?? ''))
          throw new Error(
            `round ${round}: device desired value ${stored}, acknowledged ${lastEdit} (in flight: ${[...pendingEdits].join(', ')})`,
          );
      } finally {
        db.close();
      }
      o.progress?.(
        `round ${round}/${o.iterations}: killed after ${acked} acknowledged writes; integrity ok; ` +
          `${restartsAcked} restarts and ${editsAcked} device edits acknowledged so far, none lost ` +
          `(restart answers: ${[...restartCodes].map(([c, n]) => `${n}×${c}`).join(', ')})`,
      );
    }
    return { rounds: o.iterations, restartsAcked, editsAcked };
  } finally {
    await agent?.kill9();
    await mapper?.stop();
    await removeSandboxes(cri, ns);
    cri.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
