// The cloud lab's control plane (scripts/cloud/plane.ts) survives a port taken under it: the
// first start's API server port is held by another listener, so kube-apiserver 1.20.2 exits with
// "address already in use" and the plane starts again on fresh ports; a restart after a link cut
// (stopApiserver) waits while its port is held, then binds it. The ports it picks lie below the
// kernel's ephemeral range, where no outgoing connection can take them.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { controlPlaneBuilt } from '../../scripts/cloud/build.ts';
import { startControlPlane } from '../../scripts/cloud/plane.ts';
import { freePort } from '../../scripts/free-port.ts';
import { cloudLabOrSkip } from '../helpers/cloud.ts';

const file = 'test/e2e/cloud-plane.test.ts';

/** A listener on `port` that closes every connection it accepts (clients of the plane reach it too). */
const hold = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const srv = createServer((socket) => socket.destroy());
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => resolve(srv));
  });
const close = (srv: Server) => new Promise<void>((r) => srv.close(() => r()));

test('freePort: a port below the ephemeral range that can be listened on', async () => {
  const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
    .trim()
    .split(/\s+/)
    .map(Number);
  const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
  const room = (low as number) - 10_000 >= 1_000; // else it falls back to a port the kernel picks
  for (const p of ports) {
    if (room) assert.ok(p >= 10_000 && p < (low as number), `${p} is below ${low}`);
    await close(await hold(p));
  }
});

if (controlPlaneBuilt()) {
  test('the plane starts again on fresh ports when its API server port is taken', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-cloud-plane-'));
    const taken = await freePort();
    const holder = await hold(taken);
    const tried: number[] = [];
    const errors: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => {
      errors.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    let plane: Awaited<ReturnType<typeof startControlPlane>> | undefined;
    try {
      try {
        plane = await startControlPlane({
          dir,
          log: () => {},
          ports: async (attempt) => {
            tried.push(attempt);
            return [await freePort(), await freePort(), attempt === 1 ? taken : await freePort()];
          },
        });
      } finally {
        process.stderr.write = write;
      }
      assert.equal(tried, [1, 2]);
      assert.is.not(plane.port, taken);
      assert.match(errors.join(''), /kube-apiserver exited 1; see .*kube-apiserver\.log; it ends:/);
      assert.match(errors.join(''), /address already in use/);
      assert.match(errors.join(''), /starting the control plane again on fresh ports \(1\/2\)/);
      assert.is((await plane.adminGet('/readyz')).status, 200);

      // A link cut: the port is held while the API server is down; startApiserver waits for it.
      await plane.stopApiserver();
      const squatter = await hold(plane.port);
      let done = false;
      const started = plane.startApiserver().then(() => {
        done = true;
      });
      await new Promise((r) => setTimeout(r, 3_000));
      assert.not.ok(done, 'startApiserver waits while its port is held');
      await close(squatter);
      await started;
      assert.is((await plane.adminGet('/readyz')).status, 200);
      assert.match(readFileSync(join(dir, 'kube-apiserver.log'), 'utf8'), /address already in use/);
    } finally {
      await plane?.stop();
      await close(holder);
      rmSync(dir, { recursive: true, force: true });
    }
  });
} else {
  await cloudLabOrSkip(file);
}

test.run();
