// The real control plane for the cloud suites (scripts/lab-cloud.ts), one per suite, with the
// real kubectl as admin and a TCP proxy in front of the API server for link faults.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import { controlPlaneBuilt, kubeCache } from '../../scripts/cloud/build.ts';
import { type ControlPlane, type ControlPlaneOptions, startControlPlane } from '../../scripts/cloud/plane.ts';
import { waitFor } from './lab.ts';

export interface CloudLab extends ControlPlane {
  /** The real kubectl as cluster admin; resolves with stdout, rejects with stderr. */
  kubectl(args: string[], input?: string): Promise<string>;
  /** Creates a namespace and waits until its `default` ServiceAccount exists (pods need it). */
  createNamespace(name: string): Promise<void>;
  /** A TCP proxy in front of the API server; node kubeconfigs may point at it. */
  proxy: FaultProxy;
  /**
   * Watches a collection as admin (`path` with its query, e.g. `/api/v1/namespaces/x/pods?
   * fieldSelector=metadata.name=y`) and collects every event until stopped (the current objects
   * first, as ADDED). Resolves once the stream is open, so every later change is seen.
   */
  watch(path: string): Promise<AdminWatch>;
}

export interface AdminWatch {
  events: { type: string; object: { metadata: { name: string; uid?: string }; status?: unknown } }[];
  stop(): void;
}

/**
 * Starts a control plane for one suite; registers a loudly skipped test when none can be built, and
 * a failing one when it does not start.
 */
export async function cloudLabOrSkip(
  file: string,
  opts: Partial<ControlPlaneOptions> = {},
): Promise<CloudLab | undefined> {
  if (!controlPlaneBuilt()) {
    const msg =
      `\n!!! SKIPPING ${file}: no Kubernetes control plane built in ${kubeCache()}.\n` +
      '!!! Run `npm run lab:cloud -- build` (needs golang-go, dpkg-dev, golang-github-modern-go-reflect2-dev,\n' +
      '!!! etcd-server and deb-src entries; .ci/run installs them). The cloud link is UNTESTED in this run.\n\n';
    process.stderr.write(msg);
    test.skip(`${file} (no control plane built: see the warning above)`, () => {});
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'outpost-cloud-'));
  const plane = await startControlPlane({ dir, log: () => {}, ...opts }).catch((e: Error) => e);
  if (plane instanceof Error) {
    // One failing test instead of a throw at the suite's import, which would end the whole run
    // (uvu imports every file before it runs a test) and hide every other suite's results.
    rmSync(dir, { recursive: true, force: true });
    test(`${file}: the control plane starts`, () => {
      throw plane;
    });
    return undefined;
  }
  const kubectl = (args: string[], input?: string) =>
    new Promise<string>((resolve, reject) => {
      const child = execFile(
        'kubectl',
        ['--kubeconfig', plane.adminKubeconfig, ...args],
        { maxBuffer: 16 << 20, timeout: 60_000 },
        (err, stdout, stderr) =>
          err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout),
      );
      if (input !== undefined) child.stdin?.end(input);
    });
  const proxy = await startFaultProxy(plane.port);
  const tls = () => ({
    ca: readFileSync(join(dir, 'ca.crt')),
    cert: readFileSync(join(dir, 'admin.crt')),
    key: readFileSync(join(dir, 'admin.key')),
  });
  const lab: CloudLab = {
    ...plane,
    kubectl,
    proxy,
    watch(path) {
      const events: AdminWatch['events'] = [];
      const sep = path.includes('?') ? '&' : '?';
      return new Promise((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port: plane.port, path: `${path}${sep}watch=true`, ...tls() },
          (res) => {
            if (res.statusCode !== 200) return reject(new Error(`watch ${path}: HTTP ${res.statusCode}`));
            let buf = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => {
              buf += d;
              for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
                const line = buf.slice(0, nl).trim();
                buf = buf.slice(nl + 1);
                if (line) events.push(JSON.parse(line));
              }
            });
            res.on('error', () => {});
            // The stream is open (headers sent): every change from here on is delivered.
            resolve({ events, stop: () => req.destroy() });
          },
        );
        req.on('error', (e) => reject(e));
        req.end();
      });
    },
    async createNamespace(name) {
      await kubectl(['create', 'namespace', name]);
      // The controller manager creates `default` asynchronously; a pod created before it is refused.
      const sa = await waitFor(
        () => kubectl(['-n', name, 'get', 'serviceaccount', 'default', '-o', 'name']).catch(() => ''),
        120_000,
        250,
      );
      if (!sa) throw new Error(`namespace ${name}: no default ServiceAccount after 120 s`);
    },
    async stop() {
      await proxy.close();
      await plane.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return lab;
}

/** A loopback TCP proxy that can cut every connection and refuse new ones until restored. */
export interface FaultProxy {
  port: number;
  url: string;
  /** Drops every open connection and refuses new ones. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export function startFaultProxy(targetPort: number): Promise<FaultProxy> {
  const sockets = new Set<Socket>();
  let cut = false;
  const server: Server = createServer((client) => {
    if (cut) return void client.destroy();
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        port,
        url: `https://127.0.0.1:${port}`,
        cut() {
          cut = true;
          for (const s of sockets) s.destroy();
          sockets.clear();
        },
        restore() {
          cut = false;
        },
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            server.close(() => r());
          }),
      });
    }),
  );
}
