// A registry for e2e tests on the lab (which has no internet): it serves one image the lab's
// containerd exported (an OCI layout: index.json, blobs/sha256/...) over plain HTTP on loopback,
// which containerd 1.6 dials without TLS (a localhost registry's default scheme is http). While
// `stalled` it accepts every request and answers none, as a registry that took the connection and
// hangs: a pull against it stays in flight until it is cancelled.
import { execFileSync } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestRegistry {
  /** `127.0.0.1:PORT`, the host part of the image names it serves. */
  host: string;
  /** Requests held unanswered now. */
  held(): number;
  /** Held requests whose client went away (the pull was cancelled) before an answer. */
  abandoned(): number;
  /** Requests received, held or answered. */
  requests(): number;
  /** Answers from now on, as a registry does. */
  release(): void;
  close(): Promise<void>;
}

/** Serves `image` of the lab's containerd (`ctr --address socket`) under any repository name and tag. */
export async function startRegistry(socket: string, image: string, stalled = true): Promise<TestRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-registry-'));
  const tar = join(dir, 'image.tar');
  execFileSync('ctr', ['--address', socket, '-n', 'k8s.io', 'images', 'export', tar, image], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  execFileSync('tar', ['-xf', tar, '-C', dir]);
  const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as {
    manifests: { mediaType: string; digest: string }[];
  };
  const manifest = index.manifests[0]!;
  const blob = (digest: string) => join(dir, 'blobs', ...digest.split(':'));
  let stall = stalled;
  let requests = 0;
  let abandoned = 0;
  const held = new Set<ServerResponse>();

  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://registry').pathname;
    if (path === '/v2/' || path === '/v2') return void res.writeHead(200).end('{}');
    const m = /^\/v2\/.+\/(manifests|blobs)\/([^/]+)$/.exec(path);
    if (!m) return void res.writeHead(404).end();
    // A manifest asked by tag or by digest is the one image's; a blob is whatever digest is asked.
    const digest = m[1] === 'manifests' ? manifest.digest : m[2]!;
    let size: number;
    try {
      size = statSync(blob(digest)).size;
    } catch {
      return void res.writeHead(404).end();
    }
    res.writeHead(200, {
      'content-length': size,
      'content-type': m[1] === 'manifests' ? manifest.mediaType : 'application/octet-stream',
      'docker-content-digest': digest,
    });
    if (req.method === 'HEAD') return void res.end();
    createReadStream(blob(digest)).pipe(res);
  };

  const server = createServer((req, res) => {
    requests++;
    if (!stall) return answer(req, res);
    held.add(res);
    res.on('close', () => {
      if (held.delete(res)) abandoned++;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    held: () => held.size,
    abandoned: () => abandoned,
    requests: () => requests,
    release() {
      stall = false;
    },
    async close() {
      for (const res of held) res.destroy();
      held.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
