// npm run bench:cloud — the outbox after an outage: 1,000 entries queued while offline (events,
// as a node records them), then the time from the link restored to the outbox empty, against a
// real kube-apiserver 1.20.2 from the cloud lab with the node's own identity. The anchor, in the
// same run and on the same connection, is the naive sender: one request per entry, one after
// another. Printed side by side, with the ratio.
// Not measured yet: the agent's RSS with 50 cloud pods beside the same pods from manifests.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openMetabase } from '#db/open.ts';
import { systemClock } from '#lib/clock.ts';
import { createCloudContext, loadKubeConfig } from '#lib/cloud/context.ts';
import { contextRequest } from '#lib/cloud/list-watch.ts';
import { OutboxSender } from '#lib/cloud/outbox-sender.ts';
import { silentLogger } from '#lib/log.ts';
import { createStore, type Store } from '#lib/store/index.ts';
import { startControlPlane } from '../scripts/cloud/plane.ts';

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 1000);
const NODE = 'bench-node';
const NS = 'bench';

/** A store whose outbox holds ENTRIES distinct events (each its own object, as after an outage). */
function queued(tag: string): Store {
  const store = createStore(openMetabase(':memory:'), { host: NODE });
  store.outbox.enabled = true;
  for (let i = 0; i < ENTRIES; i++) {
    store.events.record(
      { kind: 'Pod', namespace: NS, name: `pod-${i % 50}`, uid: `uid-${i % 50}` },
      'Normal',
      'Queued',
      `${tag} entry ${i}`,
      'kubelet',
    );
  }
  return store;
}

const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-cloud-'));
const plane = await startControlPlane({ dir, log: () => {} });
try {
  execFileSync('kubectl', ['--kubeconfig', plane.adminKubeconfig, 'create', 'namespace', NS]);
  const ctx = await createCloudContext({
    kubeConfig: loadKubeConfig(plane.nodeKubeconfig(NODE)),
    nodeName: NODE,
    clock: systemClock,
    log: silentLogger,
  });
  const request = contextRequest(ctx);
  // Warm the connection (TLS, HTTP/2) so neither side pays for it.
  await request('GET', `/api/v1/namespaces/${NS}/events?limit=1`);

  const naive = queued('naive');
  let t = performance.now();
  let naiveRequests = 0;
  for (const e of naive.outbox.peek(ENTRIES)) {
    const ev = e.payload as { metadata: { name: string } };
    const r = await request('POST', `/api/v1/namespaces/${NS}/events`, {
      ...(e.payload as object),
      metadata: { name: ev.metadata.name, namespace: NS },
    });
    naiveRequests += 1;
    if (r.status >= 300) throw new Error(`naive POST: HTTP ${r.status}`);
    naive.outbox.ack([e.id]);
  }
  const naiveMs = performance.now() - t;

  const store = queued('outbox');
  const sender = new OutboxSender({ store, request, nodeName: NODE, log: silentLogger });
  t = performance.now();
  const sent = await sender.drain();
  const outboxMs = performance.now() - t;
  if (store.outbox.depth() !== 0 || sent !== ENTRIES)
    throw new Error(`outbox not drained: ${store.outbox.depth()} left`);

  const rows = [
    ['sender', 'entries', 'requests', 'link restored → outbox empty'],
    [
      'naive (one request per entry, in order)',
      String(ENTRIES),
      String(naiveRequests),
      `${naiveMs.toFixed(0)} ms`,
    ],
    ['Outpost outbox', String(ENTRIES), String(sender.requests), `${outboxMs.toFixed(0)} ms`],
  ];
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(i === 0 ? 42 : 12)).join(''));
  console.log(`ratio outbox / naive: ${(outboxMs / naiveMs).toFixed(2)}`);
  await ctx.close();
} finally {
  await plane.stop();
  rmSync(dir, { recursive: true, force: true });
}
