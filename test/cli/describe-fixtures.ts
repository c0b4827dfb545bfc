// Pods and events that exercise every branch of the describe formatter; kubectl must print them the
// same way (test/cli/describe.test.ts compares the two).
import type { Pod, PodStatus } from '#lib/kube/types.ts';

export const NS = 'describe-test';

const long = 'x'.repeat(150);

/** A pod with every section kubectl describe prints, and the status a running pod would have. */
export function richPod(): { pod: Pod; status: PodStatus } {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'rich',
      namespace: NS,
      labels: { app: 'web', tier: 'front' },
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration': '{"skipped":true}',
        note: 'short',
        long,
        multi: 'line one\nline two\n',
      },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f', uid: 'u-1', controller: true },
      ],
    },
    spec: {
      nodeName: 'edge-1',
      priority: 0,
      priorityClassName: 'edge-critical',
      serviceAccountName: 'default',
      runtimeClassName: 'runc',
      securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
      readinessGates: [{ conditionType: 'example.com/gate' }, { conditionType: 'example.com/other' }],
      initContainers: [{ name: 'setup', image: 'busybox:1.36', command: ['sh', '-c', 'echo set\nup'] }],
      containers: [
        {
          name: 'main',
          image: 'nginx:1.25',
          command: ['nginx'],
          args: ['-g', 'daemon off;'],
          ports: [
            { containerPort: 8080, protocol: 'TCP', hostPort: 80 },
            { containerPort: 9090, protocol: 'UDP' },
          ],
          resources: {
            limits: { cpu: '0.5', memory: '1.5Gi', 'ephemeral-storage': '2G' },
            requests: { cpu: '250m', memory: '1024Mi' },
          },
          livenessProbe: {
            httpGet: { path: '/health z', port: 8080, host: 'localhost', scheme: 'HTTPS' },
            initialDelaySeconds: 5,
            timeoutSeconds: 1,
            periodSeconds: 10,
            successThreshold: 1,
            failureThreshold: 3,
          },
          readinessProbe: { tcpSocket: { port: 'http' }, periodSeconds: 5 },
          startupProbe: { grpc: { port: 9090, service: 'health' }, failureThreshold: 30 },
          envFrom: [
            { configMapRef: { name: 'cfg' } },
            { prefix: 'S_', secretRef: { name: 'sec', optional: true } },
          ],
          env: [
            { name: 'PLAIN', value: 'value' },
            { name: 'EMPTY', value: '' },
            { name: 'MULTI', value: 'first\nsecond' },
            { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
            { name: 'POD_NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
            { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
            { name: 'CPU_M', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } },
            { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'requests.memory', divisor: '1Mi' } } },
            { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
            { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'sec', key: 'token', optional: true } } },
            { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'mode' } } },
          ],
          volumeMounts: [
            { name: 'work', mountPath: '/work' },
            { name: 'cfg', mountPath: '/etc/cfg', readOnly: true },
            { name: 'sec', mountPath: '/etc/sec/token', subPath: 'token' },
          ],
          volumeDevices: [{ name: 'raw', devicePath: '/dev/xvda' }],
        },
        {
          name: 'sidecar',
          image: 'busybox:1.36',
          env: [{ name: 'MEM_LIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.memory' } } }],
          livenessProbe: { exec: { command: ['cat', '/tmp/healthy'] } },
        },
      ],
      volumes: [
        { name: 'work', emptyDir: {} },
        { name: 'shm', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
        { name: 'host', hostPath: { path: '/var/log', type: 'Directory' } },
        { name: 'host2', hostPath: { path: '/data' } },
        { name: 'sec', secret: { secretName: 'sec', optional: true } },
        { name: 'cfg', configMap: { name: 'cfg' } },
        {
          name: 'info',
          downwardAPI: {
            items: [
              { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
              { path: 'cpu', resourceFieldRef: { containerName: 'main', resource: 'limits.cpu' } },
            ],
          },
        },
        {
          name: 'all',
          projected: {
            sources: [
              { secret: { name: 'sec' } },
              { configMap: { name: 'cfg' } },
              { downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } },
              { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
            ],
          },
        },
        { name: 'claim', persistentVolumeClaim: { claimName: 'data', readOnly: true } },
        { name: 'share', nfs: { server: 'nas', path: '/exports' } },
        { name: 'raw', csi: { driver: 'example.com/csi', volumeAttributes: { b: '2', a: '1' } } },
        { name: 'csi2', csi: { driver: 'example.com/csi', fsType: 'ext4', readOnly: true } },
        { name: 'nothing' },
      ],
      nodeSelector: { 'kubernetes.io/os': 'linux', disk: 'ssd' },
      tolerations: [
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        { key: 'dedicated', operator: 'Equal', value: 'edge', effect: 'NoSchedule' },
        { operator: 'Exists' },
      ],
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'zone',
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: {
            matchLabels: { app: 'web' },
            matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'back'] }],
          },
        },
        { maxSkew: 2, topologyKey: 'host', whenUnsatisfiable: 'ScheduleAnyway' },
      ],
    },
  } as unknown as Pod;
  const status: PodStatus = {
    phase: 'Running',
    hostIP: '192.0.2.10',
    podIP: '10.0.0.7',
    podIPs: [{ ip: '10.0.0.7' }, { ip: 'fd00::7' }],
    startTime: '2025-03-01T10:00:00Z',
    nominatedNodeName: 'edge-2',
    qosClass: 'Burstable',
    conditions: [
      { type: 'Initialized', status: 'True' },
      { type: 'Ready', status: 'False' },
      { type: 'example.com/gate', status: 'True' },
    ],
    initContainerStatuses: [
      {
        name: 'setup',
        ready: true,
        restartCount: 0,
        image: 'busybox:1.36',
        imageID: 'sha256:1111',
        containerID: 'containerd://aaaa',
        state: {
          terminated: {
            exitCode: 0,
            reason: 'Completed',
            startedAt: '2025-03-01T10:00:01Z',
            finishedAt: '2025-03-01T10:00:02Z',
          },
        },
      },
    ],
    containerStatuses: [
      {
        name: 'main',
        ready: false,
        restartCount: 2,
        image: 'nginx:1.25',
        imageID: 'sha256:2222',
        containerID: 'containerd://bbbb',
        state: { running: { startedAt: '2025-03-01T10:05:00Z' } },
        lastState: {
          terminated: {
            exitCode: 137,
            signal: 9,
            reason: 'OOMKilled',
            message: 'out of memory',
            startedAt: '2025-03-01T10:01:00Z',
            finishedAt: '2025-03-01T10:04:59Z',
          },
        },
      },
      {
        name: 'sidecar',
        ready: false,
        restartCount: 5,
        image: 'busybox:1.36',
        imageID: '',
        state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s' } },
      },
    ],
  };
  return { pod, status };
}

/** A pod being deleted, with no status yet and nothing optional set. */
export function terminatingPod(): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'leaving',
      namespace: NS,
      deletionTimestamp: new Date(Date.now() + 30_000).toISOString().replace(/\.\d+Z$/, 'Z'),
      deletionGracePeriodSeconds: 30,
    },
    spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] },
  } as Pod;
}
