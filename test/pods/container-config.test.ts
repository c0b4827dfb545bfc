import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Container, Pod } from '#lib/kube/types.ts';
import {
  buildContainerConfig,
  type ContainerConfigOptions,
  linuxResources,
  podSpecHash,
  securityContext,
} from '#lib/pods/spec/container-config.ts';
import { ContainerConfigError } from '#lib/pods/spec/env.ts';

let root = '';
test.before.each(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'outpost-ccfg-')));
});
test.after.each(() => rmSync(root, { recursive: true, force: true }));

function podWith(container: Partial<Container>, spec: Partial<Pod['spec']> = {}): [Pod, Container] {
  const c = { name: 'app', image: 'registry.local/app:1', ...container } as Container;
  const pod: Pod = {
    metadata: { name: 'web', namespace: 'ns1', uid: 'uid-1', labels: { app: 'web' } },
    spec: { containers: [c], terminationGracePeriodSeconds: 30, ...spec },
  };
  return [pod, c];
}

const options = (o: Partial<ContainerConfigOptions> = {}): ContainerConfigOptions => ({
  attempt: 2,
  restartCount: 2,
  volumes: new Map(),
  envs: [],
  logPath: 'app/2.log',
  specHash: 'abcdef0123456789',
  ...o,
});
const build = (
  c: Partial<Container>,
  o: Partial<ContainerConfigOptions> = {},
  spec: Partial<Pod['spec']> = {},
) => {
  const [pod, container] = podWith(c, spec);
  return buildContainerConfig(pod, container, options(o));
};
const configError = (re: RegExp) => (e: unknown) =>
  e instanceof ContainerConfigError && e.reason === 'CreateContainerConfigError' && re.test(e.message);

test('metadata, image, command and args with $(VAR) expansion, workingDir, env, log path, stdio', () => {
  const cfg = build(
    {
      command: ['/bin/sh', '-c'],
      args: ['echo $(GREETING) $$(GREETING) $(NOPE)'],
      workingDir: '/srv',
      stdin: true,
      stdinOnce: true,
      tty: true,
    },
    { envs: [{ key: 'GREETING', value: 'hi' }] },
  );
  assert.equal(cfg.metadata, { name: 'app', attempt: 2 });
  assert.equal(cfg.image, { image: 'registry.local/app:1' });
  assert.equal(cfg.command, ['/bin/sh', '-c']);
  assert.equal(cfg.args, ['echo hi $(GREETING) $(NOPE)']);
  assert.is(cfg.workingDir, '/srv');
  assert.equal(cfg.envs, [{ key: 'GREETING', value: 'hi' }]);
  assert.is(cfg.logPath, 'app/2.log');
  assert.equal([cfg.stdin, cfg.stdinOnce, cfg.tty], [true, true, true]);
});

test('no command or args leaves the image entrypoint and cmd alone', () => {
  const cfg = build({});
  assert.is(cfg.command, undefined);
  assert.is(cfg.args, undefined);
  assert.is(cfg.workingDir, undefined);
  assert.equal([cfg.stdin, cfg.stdinOnce, cfg.tty], [false, false, false]);
  assert.equal(build({ args: ['only-args'] }).args, ['only-args']);
});

test('labels are exactly the four kubelet sets', () => {
  assert.equal(build({}).labels, {
    'io.kubernetes.pod.name': 'web',
    'io.kubernetes.pod.namespace': 'ns1',
    'io.kubernetes.pod.uid': 'uid-1',
    'io.kubernetes.container.name': 'app',
  });
});

test('annotations as kubelet writes them, ports as Go-ordered JSON', () => {
  const cfg = build(
    {
      terminationMessagePath: '/tmp/msg',
      terminationMessagePolicy: 'FallbackToLogsOnError',
      ports: [
        { containerPort: 8080, name: 'http', protocol: 'TCP' },
        { protocol: 'UDP', containerPort: 53, hostPort: 5353, hostIP: '0.0.0.0' },
        { containerPort: 9090 },
      ],
      lifecycle: { preStop: { exec: { command: ['sleep', '1'] } } },
    },
    { restartCount: 3 },
  );
  assert.equal(cfg.annotations, {
    'io.kubernetes.container.hash': 'abcdef0123456789',
    'io.kubernetes.container.restartCount': '3',
    'io.kubernetes.container.terminationMessagePath': '/tmp/msg',
    'io.kubernetes.container.terminationMessagePolicy': 'FallbackToLogsOnError',
    'io.kubernetes.pod.terminationGracePeriod': '30',
    'io.kubernetes.container.preStopHandler': '{"exec":{"command":["sleep","1"]}}',
    'io.kubernetes.container.ports':
      '[{"name":"http","containerPort":8080,"protocol":"TCP"},{"hostPort":5353,"containerPort":53,"protocol":"UDP","hostIP":"0.0.0.0"},{"containerPort":9090,"protocol":"TCP"}]',
  });
  const plain = build({}).annotations!;
  assert.is(plain['io.kubernetes.container.ports'], undefined);
  assert.is(plain['io.kubernetes.container.terminationMessagePath'], '/dev/termination-log');
  assert.is(plain['io.kubernetes.container.terminationMessagePolicy'], 'File');
});

test('mounts: paths, readOnly, API-data volumes forced read-only, propagation names', () => {
  const volumes = new Map([
    ['data', join(root, 'data')],
    ['cfg', join(root, 'cfg')],
    ['host', '/var/run'],
  ]);
  const cfg = build(
    {
      securityContext: { privileged: true },
      volumeMounts: [
        { name: 'data', mountPath: '/data' },
        { name: 'data', mountPath: '/ro', readOnly: true, mountPropagation: 'None' },
        { name: 'cfg', mountPath: '/etc/app' },
        { name: 'host', mountPath: '/host', mountPropagation: 'HostToContainer' },
        { name: 'host', mountPath: '/shared', mountPropagation: 'Bidirectional' },
        { name: 'host', mountPath: '/odd', mountPropagation: 'Sideways' },
      ],
    },
    { volumes },
    {
      volumes: [
        { name: 'data', emptyDir: {} },
        { name: 'cfg', configMap: { name: 'c' } },
        { name: 'host', hostPath: { path: '/var/run' } },
      ],
    },
  );
  assert.equal(cfg.mounts, [
    {
      containerPath: '/data',
      hostPath: join(root, 'data'),
      readonly: false,
      propagation: 'PROPAGATION_PRIVATE',
    },
    {
      containerPath: '/ro',
      hostPath: join(root, 'data'),
      readonly: true,
      propagation: 'PROPAGATION_PRIVATE',
    },
    {
      containerPath: '/etc/app',
      hostPath: join(root, 'cfg'),
      readonly: true,
      propagation: 'PROPAGATION_PRIVATE',
    },
    {
      containerPath: '/host',
      hostPath: '/var/run',
      readonly: false,
      propagation: 'PROPAGATION_HOST_TO_CONTAINER',
    },
    {
      containerPath: '/shared',
      hostPath: '/var/run',
      readonly: false,
      propagation: 'PROPAGATION_BIDIRECTIONAL',
    },
    { containerPath: '/odd', hostPath: '/var/run', readonly: false, propagation: 'PROPAGATION_PRIVATE' },
  ]);
});

test('mounts: unknown volumes and unprivileged Bidirectional propagation are config errors', () => {
  assert.throws(
    () => build({ volumeMounts: [{ name: 'ghost', mountPath: '/x' }] }),
    configError(/^cannot find volume "ghost" to mount into container "app"$/),
  );
  assert.throws(
    () =>
      build(
        { volumeMounts: [{ name: 'v', mountPath: '/x', mountPropagation: 'Bidirectional' }] },
        { volumes: new Map([['v', root]]) },
      ),
    configError(/only to privileged containers/),
  );
});

test('subPath: a directory inside the volume, created when missing', () => {
  const vol = join(root, 'vol');
  mkdirSync(vol, { mode: 0o750 });
  const cfg = build(
    {
      volumeMounts: [
        { name: 'v', mountPath: '/a', subPath: 'app/data' },
        { name: 'v', mountPath: '/b', subPathExpr: 'pods/$(POD_NAME)' },
      ],
    },
    { volumes: new Map([['v', vol]]), envs: [{ key: 'POD_NAME', value: 'web' }] },
  );
  assert.equal(
    cfg.mounts!.map((m) => m.hostPath),
    [join(vol, 'app/data'), join(vol, 'pods/web')],
  );
  assert.ok(statSync(join(vol, 'app/data')).isDirectory());
  assert.is(statSync(join(vol, 'pods/web')).mode & 0o777, 0o750, 'created with the volume directory mode');
});

test('subPath: absolute paths, .. and symlinks out of the volume are rejected', () => {
  const vol = join(root, 'vol');
  const secret = join(root, 'secret');
  mkdirSync(vol);
  mkdirSync(secret);
  symlinkSync(secret, join(vol, 'evil'));
  symlinkSync('/etc', join(vol, 'etc-link'));
  symlinkSync('inner', join(vol, 'ok-link'));
  mkdirSync(join(vol, 'inner'));
  const mount = (m: object, envs: { key: string; value: string }[] = []) =>
    build({ volumeMounts: [{ name: 'v', mountPath: '/m', ...m }] }, { volumes: new Map([['v', vol]]), envs });
  assert.throws(
    () => mount({ subPath: '/etc' }),
    configError(/^error SubPath `\/etc` must not be an absolute path$/),
  );
  assert.throws(
    () => mount({ subPath: '../secret' }),
    configError(/^unable to provision SubPath `\.\.\/secret`: must not contain '\.\.'$/),
  );
  assert.throws(() => mount({ subPath: 'a/../../secret' }), configError(/must not contain '\.\.'/));
  assert.throws(() => mount({ subPath: 'evil' }), configError(/resolves outside the volume/));
  assert.throws(() => mount({ subPath: 'etc-link/shadow' }), configError(/resolves outside the volume/));
  assert.throws(() => mount({ subPath: 'evil/new/dir' }), configError(/resolves outside the volume/));
  assert.not.ok(existsSync(join(secret, 'new')), 'no directory was created through the symlink');
  assert.throws(
    () => mount({ subPathExpr: '$(UP)/secret' }, [{ key: 'UP', value: '..' }]),
    configError(/must not contain '\.\.'/),
  );
  assert.throws(
    () => mount({ subPathExpr: '$(A)/$(B)' }, [{ key: 'B', value: '' }]),
    configError(/^missing value for A, B$/),
  );
  assert.is(
    mount({ subPath: 'ok-link' }).mounts![0]!.hostPath,
    join(vol, 'inner'),
    'symlinks inside the volume resolve',
  );
});

test('resources: cpu shares from requests, CFS quota from limits, memory limit', () => {
  const res = (resources: object, spec: Partial<Pod['spec']> = {}) => {
    const [pod, c] = podWith({ resources }, spec);
    return linuxResources(pod, c, 8 * 1024 ** 3);
  };
  const r = res({ requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '500m', memory: '128Mi' } });
  assert.equal([r.cpuShares, r.cpuPeriod, r.cpuQuota, r.memoryLimitInBytes], [256, 100000, 50000, 134217728]);
  const limitOnly = res({ limits: { cpu: 2, memory: '1G' } });
  assert.equal([limitOnly.cpuShares, limitOnly.cpuQuota, limitOnly.memoryLimitInBytes], [2048, 200000, 1e9]);
  const none = res({});
  assert.equal(
    [none.cpuShares, none.cpuPeriod, none.cpuQuota, none.memoryLimitInBytes],
    [2, 100000, 0, undefined],
  );
  const tiny = res({ requests: { cpu: '1m' }, limits: { cpu: '1m' } });
  assert.equal([tiny.cpuShares, tiny.cpuQuota], [2, 1000], 'minimum shares and minimum 1 ms quota');
  assert.is(res({ requests: { cpu: '0' }, limits: { cpu: '1' } }).cpuShares, 2);
  assert.is(res({ requests: { cpu: 1000 } }).cpuShares, 262144, 'shares are capped');
  assert.throws(
    () => res({ limits: { memory: '1 GB' } }),
    configError(/^resources\.limits\.memory: quantities must match/),
  );
});

test('resources: OOM score adjustment by QoS class', () => {
  const oom = (resources: object, spec: Partial<Pod['spec']> = {}) => {
    const [pod, c] = podWith({ resources }, spec);
    return linuxResources(pod, c, 1000 * 1024 ** 2).oomScoreAdj;
  };
  assert.is(oom({}), 1000, 'BestEffort');
  assert.is(oom({ limits: { cpu: '1', memory: '1Gi' } }), -997, 'Guaranteed');
  assert.is(oom({ requests: { memory: '100Mi' } }), 900, 'Burstable: 1000 - 1000*request/capacity');
  assert.is(oom({ requests: { memory: '999Mi' } }), 3, 'never below 3');
  assert.is(oom({ requests: { cpu: '100m' } }), 999, 'Burstable never equals BestEffort');
  assert.is(oom({}, { priorityClassName: 'system-node-critical' }), -997);
});

test('securityContext: container over pod settings, capabilities, no_new_privs, namespaces', () => {
  const [pod, c] = podWith(
    {
      securityContext: {
        privileged: true,
        runAsUser: 1000,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      },
    },
    { securityContext: { runAsUser: 1, runAsGroup: 2000, supplementalGroups: [3000], fsGroup: 4000 } },
  );
  assert.equal(securityContext(pod, c), {
    namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' },
    privileged: true,
    readonlyRootfs: true,
    runAsUser: { value: 1000 },
    runAsGroup: { value: 2000 },
    supplementalGroups: [3000, 4000],
    capabilities: { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] },
    noNewPrivs: true,
    seccomp: { profileType: 'RuntimeDefault' },
  });
  const [plain, pc] = podWith({}, { hostNetwork: true, hostIPC: true, shareProcessNamespace: true });
  assert.equal(securityContext(plain, pc), {
    namespaceOptions: { network: 'NODE', pid: 'POD', ipc: 'NODE' },
    privileged: false,
    readonlyRootfs: false,
  });
  const [hostPid, hc] = podWith(
    {
      securityContext: {
        allowPrivilegeEscalation: true,
        seccompProfile: { type: 'Localhost', localhostProfile: 'p.json' },
      },
    },
    { hostPID: true },
  );
  const sc = securityContext(hostPid, hc);
  assert.is(sc.namespaceOptions!.pid, 'NODE');
  assert.is(sc.noNewPrivs, undefined);
  assert.equal(sc.seccomp, { profileType: 'Localhost', localhostRef: 'p.json' });
  assert.equal(build({ securityContext: { runAsGroup: 5 } }).linux!.securityContext!.runAsGroup, {
    value: 5,
  });
});

test('securityContext: runAsNonRoot with runAsUser 0 is refused', () => {
  assert.throws(
    () => build({ securityContext: { runAsUser: 0 } }, {}, { securityContext: { runAsNonRoot: true } }),
    configError(/^container's runAsUser breaks non-root policy \(pod: "web_ns1\(uid-1\)", container: app\)$/),
  );
});

test('podSpecHash: 16 hex digits, stable under key order, sensitive to spec changes only', () => {
  const [a] = podWith({ env: [{ name: 'A', value: '1' }] });
  const b: Pod = {
    metadata: { name: 'other', uid: 'x' },
    status: { phase: 'Running' },
    spec: {
      terminationGracePeriodSeconds: 30,
      containers: [{ env: [{ value: '1', name: 'A' }], image: 'registry.local/app:1', name: 'app' }],
    },
  };
  assert.match(podSpecHash(a), /^[0-9a-f]{16}$/);
  assert.is(podSpecHash(a), podSpecHash(b));
  assert.is(podSpecHash(a), podSpecHash(structuredClone(a)));
  const changed = structuredClone(a);
  changed.spec.containers[0]!.image = 'registry.local/app:2';
  assert.is.not(podSpecHash(changed), podSpecHash(a));
  const reordered = structuredClone(a);
  reordered.spec.containers.push({ name: 'b', image: 'x' });
  const swapped = structuredClone(reordered);
  swapped.spec.containers.reverse();
  assert.is.not(podSpecHash(reordered), podSpecHash(swapped), 'list order matters');
});

test.run();
