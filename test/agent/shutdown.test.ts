// Graceful shutdown under load: close() while requests are on the wire and a watch is open. Every
// request that reached an accepted connection before close() gets its whole 200 answer (none is
// reset), the watch ends with a clean end of stream, modules stop and the metabase is closed.
import diagnostics from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openMetabase } from '#db/open.ts';
import type { Pod } from '#lib/kube/types.ts';
import { createStore } from '#lib/store/index.ts';
import { startTestAgent } from '../helpers/agent.ts';

const PODS = 300;
const CONNECTIONS = 40;

function seed(dir: string): void {
  const mb = openMetabase(dir);
  const store = createStore(mb, { host: 'edge-1' });
  mb.sqlite.transaction(() => {
    for (let i = 0; i < PODS; i++) {
      const pod: Pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `pod-${i}`, namespace: `ns-${i % 5}`, labels: { app: 'x' } },
        spec: { nodeName: 'edge-1', containers: [{ name: 'main', image: 'busybox' }] },
      };
      store.pods.put(pod, 'api');
    }
  })();
  mb.close();
}

interface Answer {
  status: number;
  headers: string;
  body: string;
  error?: string;
}

/** Reads one HTTP/1.1 response off a raw socket, until the server closes it. */
function answer(socket: Socket): Promise<Answer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let error: string | undefined;
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', (e) => (error = (e as NodeJS.ErrnoException).code ?? e.message));
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const headers = split < 0 ? raw : raw.slice(0, split);
      let body = split < 0 ? '' : raw.slice(split + 4);
      if (/^transfer-encoding: chunked$/im.test(headers)) {
        let out = '';
        for (let rest = body; ; ) {
          const eol = rest.indexOf('\r\n');
          const size = Number.parseInt(rest.slice(0, eol), 16);
          if (!(size > 0)) break;
          out += rest.slice(eol + 2, eol + 2 + size);
          rest = rest.slice(eol + 2 + size + 2);
        }
        body = out;
      }
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0);
      resolve({ status, headers, body, ...(error ? { error } : {}) });
    });
  });
}

test('close() under load: requests on the wire finish with 200, the watch ends cleanly, all is closed', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'outpost-shutdown-'));
  seed(dataDir);
  const agent = await startTestAgent({ dataDir });
  const port = Number(new URL(agent.url).port);
  let accepted = 0;
  const onSocket = (m: unknown) => {
    if ((m as { socket: Socket }).socket.localPort === port) accepted++;
  };
  diagnostics.subscribe('net.server.socket', onSocket);
  try {
    // An open watch: the initial ADDED events, then it waits for changes.
    const watch = await fetch(`${agent.url}/api/v1/pods?watch=true`);
    assert.is(watch.status, 200);
    const reader = watch.body!.getReader();
    let watched = '';
    const watchEnded = (async () => {
      for (;;) {
        const { done, value } = await reader.read(); // throws on a reset stream
        if (done) return;
        watched += Buffer.from(value).toString('utf8');
      }
    })();
    while ((watched.match(/\n/g) ?? []).length < PODS) await new Promise((r) => setTimeout(r, 10));

    // Connections the server has accepted; each then sends one request, and close() follows at
    // once: the requests are on the wire, not yet read by the server.
    const sockets = await Promise.all(
      Array.from(
        { length: CONNECTIONS },
        () =>
          new Promise<Socket>((resolve, reject) => {
            const s = connect(port, '127.0.0.1', () => resolve(s));
            s.once('error', reject);
          }),
      ),
    );
    while (accepted < CONNECTIONS + 1) await new Promise((r) => setTimeout(r, 5));
    const answers = sockets.map((s, i) => {
      const a = answer(s);
      const path = i % 2 ? '/api/v1/pods' : `/api/v1/namespaces/ns-${i % 5}/pods/pod-${i % 5}`;
      s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n`);
      return a;
    });
    const closing = agent.close();

    const results = await Promise.all(answers);
    for (const [i, r] of results.entries()) {
      assert.is(r.error, undefined, `request ${i} failed: ${r.error}`);
      assert.is(r.status, 200, `request ${i}: ${r.headers.split('\r\n')[0]}`);
      const obj = JSON.parse(r.body) as { items?: unknown[]; metadata: { name?: string } };
      if (i % 2) assert.is(obj.items?.length, PODS, `request ${i}: the whole list`);
      else assert.is(obj.metadata.name, `pod-${i % 5}`);
      assert.match(r.headers, /^connection: close$/im, 'keep-alive is not offered while shutting down');
    }
    await watchEnded; // a clean end of stream, not an error
    assert.ok(watched.endsWith('\n'), 'the watch ends between events');
    await closing;

    assert.not.ok(agent.metabase.sqlite.open, 'the metabase is closed');
    assert.ok(
      agent.supervisor.snapshot().every((m) => m.state === 'stopped'),
      JSON.stringify(agent.supervisor.snapshot()),
    );
    // A new TCP connection (fetch could reuse a pooled socket and report its reset instead).
    const refused = await new Promise<string>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve('answered');
      });
      s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    });
    assert.is(refused, 'ECONNREFUSED', 'nothing listens any more');
  } finally {
    diagnostics.unsubscribe('net.server.socket', onSocket);
    await agent.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
