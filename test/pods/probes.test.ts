import type { IncomingHttpHeaders, Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { Server as GrpcServer, ServerCredentials, status } from '@grpc/grpc-js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ManualClock } from '#lib/clock.ts';
import { timeout } from '#lib/kube/status.ts';
import { decodeCheckResponse, encodeCheckRequest } from '#lib/pods/probes/grpc.ts';
import type { ExecFn, K8sProbe, ProbeTarget } from '#lib/pods/probes/index.ts';
import { runProbe } from '#lib/pods/probes/index.ts';
import { freePort } from '../../scripts/free-port.ts';

const never: ExecFn = () => new Promise(() => {});
const target = (exec: ExecFn = never, ports: ProbeTarget['ports'] = []): ProbeTarget => ({
  containerId: 'c1',
  podIP: '127.0.0.1',
  hostIP: '10.9.9.9',
  exec,
  ports,
});

test('exec: exit 0 succeeds with stdout and stderr joined; the runtime gets id, command, timeout', async () => {
  const calls: unknown[] = [];
  const exec: ExecFn = async (id, cmd, t) => {
    calls.push([id, cmd, t]);
    return { stdout: Buffer.from('up '), stderr: new Uint8Array([111, 107]), exitCode: 0 };
  };
  const r = await runProbe({ exec: { command: ['cat', '/tmp/healthy'] }, timeoutSeconds: 3 }, target(exec));
  assert.equal(r, { result: 'success', output: 'up ok' });
  assert.equal(calls, [['c1', ['cat', '/tmp/healthy'], 3]]);
});

test('exec: a non-zero exit fails with its output, or says the exit code when there is none', async () => {
  const msg = "cat: can't open '/tmp/healthy': No such file or directory\n";
  const r = await runProbe(
    { exec: { command: ['cat', '/tmp/healthy'] } },
    target(async () => ({ stdout: '', stderr: msg, exitCode: 1 })),
  );
  assert.equal(r, { result: 'failure', output: msg });
  const silent = await runProbe(
    { exec: { command: ['false'] } },
    target(async () => ({ stdout: '', stderr: '', exitCode: 2 })),
  );
  assert.equal(silent, { result: 'failure', output: 'command "false" exited with 2' });
});

test('exec: output is cut at 10 KiB like kubelet', async () => {
  const r = await runProbe(
    { exec: { command: ['x'] } },
    target(async () => ({ stdout: 'a'.repeat(20_000), stderr: '', exitCode: 1 })),
  );
  assert.is(r.output.length, 10 * 1024);
});

test('exec: no answer within timeoutSeconds is a failure; so is the runtime reporting its timeout', async () => {
  const clock = new ManualClock();
  const p = runProbe(
    { exec: { command: ['sleep', '9'] }, timeoutSeconds: 2 },
    target(never),
    undefined,
    clock,
  );
  clock.advance(1999);
  let settled = false;
  void p.then(() => (settled = true));
  await new Promise((r) => setImmediate(r));
  assert.not.ok(settled);
  clock.advance(1);
  assert.equal(await p, { result: 'failure', output: 'command timed out: "sleep 9" timed out after 2s' });
  assert.is(clock.pending, 0);
  const byRuntime = await runProbe(
    { exec: { command: ['sleep', '9'] } },
    target(() => Promise.reject(timeout('ExecSync got no answer'))),
  );
  assert.equal(byRuntime, { result: 'failure', output: 'command timed out: "sleep 9" timed out after 1s' });
});

test('exec: a runtime error is unknown (kubelet: errored), not a failure', async () => {
  const r = await runProbe(
    { exec: { command: ['x'] } },
    target(() => Promise.reject(new Error('container not running'))),
  );
  assert.equal(r, { result: 'unknown', output: 'container not running' });
  assert.equal(await runProbe({}, target()), { result: 'unknown', output: 'missing probe handler' });
});

// One real HTTP server on 127.0.0.1 with a route per case.
let server: Server;
let port = 0;
let seen: { url: string; headers: IncomingHttpHeaders }[] = [];
const hung: (() => void)[] = [];

test.before(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    const path = req.url?.split('?')[0];
    if (path === '/ok') res.end('healthy');
    else if (path === '/fail') res.writeHead(500).end('secret stack trace');
    else if (path === '/here') res.writeHead(302, { location: '/ok' }).end();
    else if (path === '/away') res.writeHead(302, { location: `http://localhost:${port}/ok` }).end('moved');
    else if (path === '/loop') res.writeHead(301, { location: '/loop' }).end();
    else if (path === '/hang') hung.push(() => res.destroy());
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
test.after(async () => {
  for (const h of hung) h();
  await new Promise((r) => server.close(r));
});

const get = (path: string, extra: Partial<NonNullable<K8sProbe['httpGet']>> = {}): K8sProbe => ({
  httpGet: { path, port, ...extra },
});

test('httpGet: 200 succeeds; kube-probe user agent, Accept */*, the probe headers and query', async () => {
  seen = [];
  const probe = get('/ok?verbose=1', {
    httpHeaders: [
      { name: 'X-Probe', value: 'a' },
      { name: 'X-Probe', value: 'b' },
    ],
  });
  assert.equal(await runProbe(probe, target()), { result: 'success', output: 'healthy' });
  assert.is(seen[0]?.url, '/ok?verbose=1');
  assert.match(seen[0]?.headers['user-agent'] ?? '', /^kube-probe\/1\.\d+$/);
  assert.is(seen[0]?.headers.accept, '*/*');
  assert.is(seen[0]?.headers['x-probe'], 'a, b');
  assert.is(seen[0]?.headers.connection, 'close');
});

test('httpGet: an empty Accept header removes it; a Host header and a named port are honoured', async () => {
  seen = [];
  const probe = get('/ok', {
    port: 'web',
    httpHeaders: [
      { name: 'Accept', value: '' },
      { name: 'Host', value: 'app.local' },
    ],
  });
  const r = await runProbe(probe, target(never, [{ name: 'web', containerPort: port }]));
  assert.is(r.result, 'success');
  assert.is(seen[0]?.headers.accept, undefined);
  assert.is(seen[0]?.headers.host, 'app.local');
  const missing = await runProbe(get('/ok', { port: 'metrics' }), target());
  assert.equal(missing, {
    result: 'unknown',
    output: `port "metrics" not found among the container's ports`,
  });
});

test('httpGet: 500 fails with the status code only, not the body', async () => {
  assert.equal(await runProbe(get('/fail'), target()), {
    result: 'failure',
    output: 'HTTP probe failed with statuscode: 500',
  });
});

test('httpGet: a redirect on the same host is followed; to another host it ends as a warning', async () => {
  seen = [];
  assert.equal(await runProbe(get('/here'), target()), { result: 'success', output: 'healthy' });
  assert.equal(
    seen.map((s) => s.url),
    ['/here', '/ok'],
  );
  seen = [];
  const away = await runProbe(get('/away'), target());
  assert.equal(away, {
    result: 'success',
    warning: true,
    output: 'Probe terminated redirects, Response body: moved',
  });
  assert.is(seen.length, 1, 'the other host is not asked');
  const loop = await runProbe(get('/loop'), target());
  assert.equal(loop, {
    result: 'failure',
    output: `Get "http://127.0.0.1:${port}/loop": stopped after 10 redirects`,
  });
});

test('httpGet: a refused port fails as Go words it; host defaults to the pod IP', async () => {
  const closed = await freePort();
  const r = await runProbe({ httpGet: { path: '/healthz', port: closed } }, target());
  const addr = `127.0.0.1:${closed}`;
  assert.equal(r, {
    result: 'failure',
    output: `Get "http://${addr}/healthz": dial tcp ${addr}: connect: connection refused`,
  });
});

test('httpGet: a server that never answers times out on the clock', async () => {
  const clock = new ManualClock();
  seen = [];
  const p = runProbe({ ...get('/hang'), timeoutSeconds: 1 }, target(), undefined, clock);
  while (seen.length === 0) await new Promise((r) => setTimeout(r, 5)); // wait for the real socket
  clock.advance(1000);
  assert.equal(await p, {
    result: 'failure',
    output: `Get "http://127.0.0.1:${port}/hang": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
  });
});

test('tcpSocket: an open port succeeds, a closed one fails', async () => {
  assert.equal(await runProbe({ tcpSocket: { port } }, target()), { result: 'success', output: '' });
  const closed = await freePort();
  assert.equal(
    await runProbe({ tcpSocket: { port: closed, host: '127.0.0.1' } }, { ...target(), podIP: '' }),
    {
      result: 'failure',
      output: `dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    },
  );
});

test('grpc: SERVING succeeds, NOT_SERVING and errors fail', async () => {
  const grpc = new GrpcServer();
  const check = (call: ServerUnaryCall<{ service: string }, number>, cb: sendUnaryData<number>) => {
    if (call.request.service === 'missing') cb({ code: status.NOT_FOUND, details: 'unknown service' });
    else cb(null, call.request.service === 'db' ? 2 : 1);
  };
  const method = {
    path: '/grpc.health.v1.Health/Check',
    requestStream: false,
    responseStream: false,
    requestSerialize: (r: { service: string }) => encodeCheckRequest(r.service),
    // An object: grpc-js takes a falsy request message for a missing one.
    requestDeserialize: (b: Buffer) => ({ service: b.subarray(2).toString() }),
    responseSerialize: (n: number) => Buffer.from([0x08, n]),
    responseDeserialize: decodeCheckResponse,
  };
  grpc.addService({ Check: method }, { Check: check });
  const gport = await new Promise<number>((res, rej) =>
    grpc.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
  );
  try {
    assert.equal(await runProbe({ grpc: { port: gport } }, target()), {
      result: 'success',
      output: 'service is serving',
    });
    const db = await runProbe({ grpc: { port: gport, service: 'db' } }, target());
    assert.equal(db, { result: 'failure', output: 'service unhealthy (responded with "NOT_SERVING")' });
    const missing = await runProbe({ grpc: { port: gport, service: 'missing' } }, target());
    assert.equal(missing, {
      result: 'failure',
      output: 'error: health rpc probe failed: rpc error: code = NOT_FOUND desc = unknown service',
    });
  } finally {
    grpc.forceShutdown();
  }
  const refused = await runProbe({ grpc: { port: await freePort() } }, target());
  assert.is(refused.result, 'failure');
  assert.match(refused.output, /^error: failed to connect service at "127\.0\.0\.1:\d+": /);
});

test.run();
