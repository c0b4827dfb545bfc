import {
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { KubeObject, Pod } from '#lib/kube/types.ts';
import { cleanupVolumes, prepareVolumes, type VolumeContext, VolumeError } from '#lib/pods/spec/volumes.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const store = new Map<string, KubeObject>();
const put = (kind: string, name: string, body: Record<string, unknown>) =>
  store.set(`${kind}/ns1/${name}`, { metadata: { name, namespace: 'ns1' }, ...body });

let root = '';
let podDir = '';
const ctx = (): VolumeContext => ({
  podDir,
  nodeName: 'edge-1',
  podIP: '10.0.0.5',
  hostIP: '192.168.1.10',
  allocatable: { cpu: '4', memory: '8Gi' },
  lookup: (kind, ns, name) => store.get(`${kind}/${ns}/${name}`),
});
const podWith = (volumes: unknown[], containers: unknown[] = [{ name: 'app', image: 'x' }]): Pod => ({
  metadata: {
    name: 'web',
    namespace: 'ns1',
    uid: 'uid-1',
    labels: { b: '2', a: 'one "1"' },
    annotations: { k: 'v' },
  },
  spec: { containers: containers as Pod['spec']['containers'], volumes },
});
const prepare = (volumes: unknown[], containers?: unknown[]) =>
  prepareVolumes(podWith(volumes, containers), ctx());
const mode = (p: string) => statSync(p).mode & 0o7777;
const volumeError = (re: RegExp) => (e: unknown) =>
  e instanceof VolumeError && e.reason === 'FailedMount' && re.test(e.message);

async function rejects(p: Promise<unknown>, check: (e: unknown) => boolean, msg?: string) {
  try {
    await p;
  } catch (e) {
    assert.ok(check(e), `${msg ?? ''} unexpected error: ${(e as Error).message}`);
    return;
  }
  assert.unreachable(`${msg ?? ''} should have thrown`);
}

test.before.each(async () => {
  root = await mkdtemp(join(tmpdir(), 'outpost-volumes-'));
  podDir = join(root, 'pods', 'uid-1');
  store.clear();
  put('ConfigMap', 'cfg', {
    data: { 'app.conf': 'level=debug\n', other: 'x' },
    binaryData: { 'logo.bin': b64('\x00\x01') },
  });
  put('Secret', 'creds', { data: { user: b64('admin'), pass: b64('p@ss') } });
});
test.after.each(() => rm(root, { recursive: true, force: true }));

test('emptyDir is a world-writable directory that keeps its contents across calls', async () => {
  const vols = await prepare([
    { name: 'scratch', emptyDir: {} },
    { name: 'mem', emptyDir: { medium: 'Memory' } },
    { name: 'bare' },
  ]);
  const dir = vols.get('scratch')!;
  assert.is(dir, join(podDir, 'volumes', 'kubernetes.io~empty-dir', 'scratch'));
  assert.is(mode(dir), 0o777);
  assert.ok(statSync(vols.get('mem')!).isDirectory(), 'medium Memory falls back to a plain directory');
  assert.ok(statSync(vols.get('bare')!).isDirectory(), 'a volume without a source is an emptyDir');
  await writeFile(join(dir, 'keep'), 'me');
  await prepare([{ name: 'scratch', emptyDir: {} }]);
  assert.is(readFileSync(join(dir, 'keep'), 'utf8'), 'me');
});

test('configMap: one file per key (data and binaryData) through the ..data symlink', async () => {
  const dir = (await prepare([{ name: 'cfg', configMap: { name: 'cfg' } }])).get('cfg')!;
  assert.is(dir, join(podDir, 'volumes', 'kubernetes.io~configmap', 'cfg'));
  assert.is(readFileSync(join(dir, 'app.conf'), 'utf8'), 'level=debug\n');
  assert.equal(readFileSync(join(dir, 'logo.bin')), Buffer.from([0, 1]));
  assert.is(readlinkSync(join(dir, 'app.conf')), '..data/app.conf');
  assert.match(readlinkSync(join(dir, '..data')), /^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.[0-9a-f]{16}$/);
  assert.is(mode(join(dir, 'app.conf')), 0o644);
  assert.is(mode(join(podDir, 'volumes')) & 0o007, 0, 'other host users cannot reach volume contents');
  assert.equal(
    readdirSync(dir)
      .filter((n) => !n.startsWith('..'))
      .sort(),
    ['app.conf', 'logo.bin', 'other'],
  );
});

test('configMap: items pick keys into paths with per-item and default modes', async () => {
  const dir = (
    await prepare([
      {
        name: 'cfg',
        configMap: {
          name: 'cfg',
          defaultMode: 0o400,
          items: [
            { key: 'app.conf', path: 'conf/nested/app.conf', mode: 0o600 },
            { key: 'other', path: 'o.txt' },
          ],
        },
      },
    ])
  ).get('cfg')!;
  assert.equal(
    readdirSync(dir)
      .filter((n) => !n.startsWith('..'))
      .sort(),
    ['conf', 'o.txt'],
  );
  assert.is(readFileSync(join(dir, 'conf/nested/app.conf'), 'utf8'), 'level=debug\n');
  assert.is(mode(join(dir, 'conf/nested/app.conf')), 0o600);
  assert.is(mode(join(dir, 'o.txt')), 0o400);
});

test('configMap: missing object or key fails unless optional', async () => {
  await rejects(
    prepare([{ name: 'cfg', configMap: { name: 'nope' } }]),
    (e) =>
      volumeError(/^MountVolume\.SetUp failed for volume "cfg" : configmap "nope" not found$/)(e) &&
      (e as VolumeError).volume === 'cfg',
  );
  await rejects(
    prepare([{ name: 'cfg', configMap: { name: 'cfg', items: [{ key: 'k', path: 'k' }] } }]),
    volumeError(/: configmap references non-existent config key: k$/),
  );
  const vols = await prepare([
    { name: 'a', configMap: { name: 'nope', optional: true } },
    {
      name: 'b',
      configMap: {
        name: 'cfg',
        optional: true,
        items: [
          { key: 'k', path: 'k' },
          { key: 'other', path: 'o' },
        ],
      },
    },
  ]);
  assert.equal(
    readdirSync(vols.get('a')!).filter((n) => !n.startsWith('..')),
    [],
  );
  assert.equal(
    readdirSync(vols.get('b')!).filter((n) => !n.startsWith('..')),
    ['o'],
  );
});

test('secret: values are base64-decoded, secretName is honoured, missing ones fail', async () => {
  const dir = (await prepare([{ name: 's', secret: { secretName: 'creds', defaultMode: 0o440 } }])).get('s')!;
  assert.is(dir, join(podDir, 'volumes', 'kubernetes.io~secret', 's'));
  assert.is(readFileSync(join(dir, 'user'), 'utf8'), 'admin');
  assert.is(readFileSync(join(dir, 'pass'), 'utf8'), 'p@ss');
  assert.is(mode(join(dir, 'user')), 0o440);
  await rejects(
    prepare([{ name: 's', secret: { secretName: 'gone' } }]),
    volumeError(/: secret "gone" not found$/),
  );
  await rejects(
    prepare([{ name: 's', secret: { secretName: 'creds', items: [{ key: 'k', path: 'k' }] } }]),
    volumeError(/: secret references non-existent secret key: k$/),
  );
  await prepare([{ name: 's', secret: { secretName: 'gone', optional: true } }]);
});

test('configMap update is atomic: ..data swaps to a new directory, old one and stale keys go', async () => {
  const vols = [{ name: 'cfg', configMap: { name: 'cfg' } }];
  const dir = (await prepare(vols)).get('cfg')!;
  const first = readlinkSync(join(dir, '..data'));
  await prepare(vols);
  assert.is(readlinkSync(join(dir, '..data')), first, 'unchanged content is not rewritten');

  put('ConfigMap', 'cfg', { data: { 'app.conf': 'level=info\n', added: 'new' } });
  await prepare(vols);
  const second = readlinkSync(join(dir, '..data'));
  assert.is.not(second, first);
  assert.is(readFileSync(join(dir, 'app.conf'), 'utf8'), 'level=info\n');
  assert.is(readFileSync(join(dir, 'added'), 'utf8'), 'new');
  assert.not.ok(existsSync(join(dir, 'other')), 'a removed key disappears');
  assert.not.ok(existsSync(join(dir, 'logo.bin')));
  assert.not.ok(existsSync(join(dir, first)), 'the old data directory is removed');
  assert.ok(lstatSync(join(dir, '..data')).isSymbolicLink());
  assert.equal(readdirSync(dir).sort(), ['..data', second, 'added', 'app.conf'].sort());
});

test('configMap update: a concurrent reader sees the old or the new file, never a mix', async () => {
  const big = (ch: string) => ch.repeat(256 * 1024);
  put('ConfigMap', 'cfg', { data: { f: big('a') } });
  const vols = [{ name: 'cfg', configMap: { name: 'cfg' } }];
  const file = join((await prepare(vols)).get('cfg')!, 'f');
  let done = false;
  let reads = 0;
  let torn = 0;
  const reader = (async () => {
    while (!done) {
      const text = await readFile(file, 'utf8');
      if (text !== big('a') && text !== big('b')) torn++;
      reads++;
    }
  })();
  for (let i = 0; i < 20; i++) {
    put('ConfigMap', 'cfg', { data: { f: big(i % 2 ? 'a' : 'b') } });
    await prepare(vols);
  }
  done = true;
  await reader;
  assert.ok(reads > 0);
  assert.is(torn, 0, 'torn or empty reads');
});

test('downwardAPI: metadata fields, label maps in k="v" lines, resources with divisors', async () => {
  const dir = (
    await prepare(
      [
        {
          name: 'info',
          downwardAPI: {
            defaultMode: 0o444,
            items: [
              { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
              { path: 'ns', fieldRef: { fieldPath: 'metadata.namespace' } },
              { path: 'uid', fieldRef: { fieldPath: 'metadata.uid' } },
              { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' }, mode: 0o400 },
              { path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } },
              { path: 'meta/a', fieldRef: { fieldPath: "metadata.labels['a']" } },
              {
                path: 'mem',
                resourceFieldRef: { containerName: 'app', resource: 'limits.memory', divisor: '1Mi' },
              },
              {
                path: 'cpu',
                resourceFieldRef: { containerName: 'app', resource: 'limits.cpu', divisor: '1m' },
              },
            ],
          },
        },
      ],
      [{ name: 'app', image: 'x', resources: { limits: { memory: '64Mi' } } }],
    )
  ).get('info')!;
  const read = (p: string) => readFileSync(join(dir, p), 'utf8');
  assert.is(dir, join(podDir, 'volumes', 'kubernetes.io~downward-api', 'info'));
  assert.equal([read('name'), read('ns'), read('uid')], ['web', 'ns1', 'uid-1']);
  assert.is(read('labels'), 'a="one \\"1\\""\nb="2"');
  assert.is(read('annotations'), 'k="v"');
  assert.is(read('meta/a'), 'one "1"');
  assert.is(read('mem'), '64');
  assert.is(read('cpu'), '4000', 'unset limit defaults to node allocatable');
  assert.is(mode(join(dir, 'labels')), 0o400);
  assert.is(mode(join(dir, 'name')), 0o444);
  await rejects(
    prepare([
      {
        name: 'i',
        downwardAPI: {
          items: [{ path: 'x', resourceFieldRef: { containerName: 'ghost', resource: 'limits.cpu' } }],
        },
      },
    ]),
    volumeError(/: container ghost not found$/),
  );
  await rejects(
    prepare([{ name: 'i', downwardAPI: { items: [{ path: 'x', fieldRef: { fieldPath: 'spec.bogus' } }] } }]),
    volumeError(/: unsupported fieldPath: spec\.bogus$/),
  );
});

test('projected: configMap, secret and downwardAPI sources merge into one directory', async () => {
  const dir = (
    await prepare([
      {
        name: 'all',
        projected: {
          defaultMode: 0o440,
          sources: [
            { configMap: { name: 'cfg', items: [{ key: 'app.conf', path: 'config/app.conf' }] } },
            { secret: { name: 'creds', items: [{ key: 'user', path: 'secret/user', mode: 0o400 }] } },
            { downwardAPI: { items: [{ path: 'podname', fieldRef: { fieldPath: 'metadata.name' } }] } },
            { configMap: { name: 'missing', optional: true } },
          ],
        },
      },
    ])
  ).get('all')!;
  assert.is(dir, join(podDir, 'volumes', 'kubernetes.io~projected', 'all'));
  assert.is(readFileSync(join(dir, 'config/app.conf'), 'utf8'), 'level=debug\n');
  assert.is(readFileSync(join(dir, 'secret/user'), 'utf8'), 'admin');
  assert.is(readFileSync(join(dir, 'podname'), 'utf8'), 'web');
  assert.is(mode(join(dir, 'config/app.conf')), 0o440);
  assert.is(mode(join(dir, 'secret/user')), 0o400);
  // kube-api-access: the token the cloud link issued for the pod (TokenRequest), else a wait.
  const tokenVolume = [
    {
      name: 'tok',
      projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }] },
    },
  ];
  await rejects(prepare(tokenVolume), volumeError(/"tok" : no service account token for the pod yet/));
  put('ServiceAccountToken', 'uid-1.3607.', { token: 'eyJhbGciOi' });
  const tok = (await prepare(tokenVolume)).get('tok')!;
  assert.is(readFileSync(join(tok, 'token'), 'utf8'), 'eyJhbGciOi');
  await rejects(
    prepare([{ name: 'p', projected: { sources: [{ secret: { name: 'gone' } }] } }]),
    volumeError(/secret "gone" not found/),
  );
});

test('hostPath: returned as is; DirectoryOrCreate and FileOrCreate create; others are checked', async () => {
  const host = join(root, 'host');
  await mkdir(host);
  writeFileSync(join(host, 'file'), 'x');
  const vols = await prepare([
    { name: 'plain', hostPath: { path: join(host, 'not-there') } },
    { name: 'mkdir', hostPath: { path: join(host, 'new/deep'), type: 'DirectoryOrCreate' } },
    { name: 'touch', hostPath: { path: join(host, 'new.txt'), type: 'FileOrCreate' } },
    { name: 'dir', hostPath: { path: `${host}/./`, type: 'Directory' } },
    { name: 'file', hostPath: { path: join(host, 'file'), type: 'File' } },
    { name: 'null', hostPath: { path: '/dev/null', type: 'CharDevice' } },
  ]);
  assert.is(vols.get('plain'), join(host, 'not-there'));
  assert.not.ok(existsSync(join(host, 'not-there')), 'no type means no check and no creation');
  assert.ok(statSync(join(host, 'new/deep')).isDirectory());
  assert.is(mode(join(host, 'new/deep')), 0o755);
  assert.is(readFileSync(join(host, 'new.txt'), 'utf8'), '');
  assert.is(vols.get('dir'), `${host}/`);
  assert.is(readFileSync(join(host, 'file'), 'utf8'), 'x', 'an existing file is not truncated');
  await prepare([{ name: 'touch', hostPath: { path: join(host, 'file'), type: 'FileOrCreate' } }]);
  assert.is(readFileSync(join(host, 'file'), 'utf8'), 'x');

  const fail = (type: string, path: string, re: RegExp) =>
    rejects(prepare([{ name: 'h', hostPath: { path, type } }]), volumeError(re), type);
  await fail(
    'Directory',
    join(host, 'missing'),
    new RegExp(`"h" : hostPath type check failed: ${host}/missing is not a directory$`),
  );
  await fail('Directory', join(host, 'file'), /is not a directory$/);
  await fail('File', host, new RegExp(`hostPath type check failed: ${host} is not a file$`));
  await fail('FileOrCreate', host, /is not a file$/);
  await fail('DirectoryOrCreate', join(host, 'file'), /is not a directory$/);
  await fail('Socket', join(host, 'file'), /is not a socket file$/);
  await fail('CharDevice', join(host, 'file'), /is not a character device$/);
  await fail('BlockDevice', '/dev/null', /is not a block device$/);
  await fail('Weird', host, /: Weird is an invalid volume type$/);
  await fail('', 'relative/path', /must be an absolute path$/);
});

test('unsupported volume types fail clearly', async () => {
  for (const [type, src] of [
    ['persistentVolumeClaim', { claimName: 'data' }],
    ['nfs', { server: 'nas', path: '/x' }],
    ['csi', { driver: 'x' }],
    ['iscsi', {}],
  ] as const) {
    await rejects(
      prepare([{ name: 'data', [type]: src }]),
      volumeError(
        new RegExp(`"data" : ${type} volumes are not supported by Outpost \\(supported: hostPath, emptyDir`),
      ),
      type,
    );
  }
  await rejects(
    prepare([{ name: 'two', emptyDir: {}, hostPath: { path: '/tmp' } }]),
    volumeError(/more than 1 volume type/),
  );
  await rejects(
    prepare([
      { name: 'a', emptyDir: {} },
      { name: 'a', emptyDir: {} },
    ]),
    volumeError(/duplicate volume name/),
  );
  await rejects(
    prepare([{ name: 'cfg', configMap: { name: 'cfg', defaultMode: 0o1777 } }]),
    volumeError(/invalid mode 1023/),
  );
});

test('security: volume names and item paths cannot leave the pod directory', async () => {
  for (const name of ['../../evil', '..', '.', 'a/b', '/abs', 'UPPER', '', 'x'.repeat(64)]) {
    await rejects(prepare([{ name, emptyDir: {} }]), volumeError(/invalid volume name/), name);
  }
  const paths: [string, RegExp][] = [
    ['../escape', /must not contain '\.\.'/],
    ['../../../../etc/passwd', /must not contain '\.\.'/],
    ['a/../../x', /must not contain '\.\.'/],
    ['/etc/passwd', /must be relative path/],
    ['..data', /must not start with '\.\.'/],
    ['..hidden/x', /must not start with '\.\.'/],
    ['', /must not be empty/],
    ['./', /must name a file/],
    ['a\0b', /must not contain NUL/],
  ];
  for (const [path, re] of paths) {
    await rejects(
      prepare([{ name: 'cfg', configMap: { name: 'cfg', items: [{ key: 'other', path }] } }]),
      volumeError(re),
      path,
    );
    await rejects(
      prepare([{ name: 'd', downwardAPI: { items: [{ path, fieldRef: { fieldPath: 'metadata.name' } }] } }]),
      volumeError(re),
      path,
    );
  }
  put('ConfigMap', 'evil', { data: { '../../../pwned': 'x' } });
  await rejects(
    prepare([{ name: 'cfg', configMap: { name: 'evil' } }]),
    volumeError(/must not contain '\.\.'/),
  );
  put('Secret', 'evil', { data: { '..data': b64('x') } });
  await rejects(
    prepare([{ name: 's', secret: { secretName: 'evil' } }]),
    volumeError(/must not start with '\.\.'/),
  );
  const written = readdirSync(root, { recursive: true, encoding: 'utf8' }).map((p) => join(root, p));
  const allowed = [join(root, 'pods'), podDir];
  const stray = written.filter((p) => !allowed.includes(p) && !p.startsWith(join(podDir, 'volumes')));
  assert.equal(stray, [], 'nothing was written outside the pod volume directory');
  assert.not.ok(written.some((p) => /pwned|escape|passwd/.test(p)));
  assert.not.ok(existsSync(join(podDir, 'pwned')));
  assert.not.ok(existsSync(join(podDir, 'volumes', 'pwned')));
});

test('cleanupVolumes removes the volume tree and the pod directory, never hostPath targets', async () => {
  const host = join(root, 'host');
  await prepare([
    { name: 'scratch', emptyDir: {} },
    { name: 'cfg', configMap: { name: 'cfg' } },
    { name: 'h', hostPath: { path: host, type: 'DirectoryOrCreate' } },
  ]);
  writeFileSync(join(host, 'keep'), 'x');
  await cleanupVolumes(podDir);
  assert.not.ok(existsSync(podDir));
  assert.is(readFileSync(join(host, 'keep'), 'utf8'), 'x');
  await cleanupVolumes(podDir); // idempotent
});

test('a pod without volumes gets an empty map and no directories', async () => {
  const vols = await prepareVolumes({ metadata: { name: 'p' }, spec: { containers: [] } }, ctx());
  assert.is(vols.size, 0);
  assert.not.ok(existsSync(podDir));
});

test.run();
