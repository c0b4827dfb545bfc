// The Pod schema: the fields Outpost runs (docs/api.md), described in Outpost's words.
import { containerSchemas } from './container.ts';
import { r, V1 } from './core-ref.ts';
import { objectMeta } from './meta.ts';
import { bool, int, keyedList, kind, list, obj, type Schema, str, stringMap, time } from './schema.ts';
import { volumeSchemas } from './volumes.ts';

function podSpec(): Schema {
  return obj(
    'The desired pod.',
    {
      containers: keyedList(r('Container'), 'name', 'Containers run side by side; at least one.'),
      initContainers: keyedList(
        r('Container'),
        'name',
        'Containers run one after another, to completion, before the others start.',
      ),
      volumes: keyedList(r('Volume'), 'name', 'Volumes the containers can mount.'),
      restartPolicy: str('When exited containers restart (default Always).', [
        'Always',
        'OnFailure',
        'Never',
      ]),
      nodeName: str('The node; must be this node or empty (it is set to this node).'),
      nodeSelector: stringMap('Informational on a single node.'),
      hostNetwork: bool("Use the node's network namespace instead of one of the pod's own."),
      hostPID: bool("Use the host's PID namespace."),
      hostIPC: bool("Use the host's IPC namespace."),
      shareProcessNamespace: bool('One PID namespace for all containers of the pod.'),
      hostname: str('Host name of the pod.'),
      subdomain: str('Subdomain of the pod.'),
      terminationGracePeriodSeconds: int(
        'Seconds between SIGTERM and SIGKILL on stop (default 30).',
        'int64',
      ),
      activeDeadlineSeconds: int('Seconds the pod may run before it is failed.', 'int64'),
      dnsPolicy: str('DNS configuration (default ClusterFirst).', [
        'ClusterFirst',
        'ClusterFirstWithHostNet',
        'Default',
        'None',
      ]),
      serviceAccountName: str('Service account (default "default").'),
      serviceAccount: str('Deprecated alias of serviceAccountName.'),
      automountServiceAccountToken: bool('Mount the service account token.'),
      securityContext: r('PodSecurityContext', 'Security options of every container.'),
      imagePullSecrets: keyedList(
        obj('A Secret.', { name: str('Its name.') }),
        'name',
        'Secrets with registry credentials.',
      ),
      tolerations: list(r('Toleration'), 'Taints the pod tolerates.'),
      priority: int('Priority value.'),
      priorityClassName: str('Priority class.'),
      schedulerName: str('Scheduler (default "default-scheduler").'),
      enableServiceLinks: bool('Service environment variables (default true).'),
      preemptionPolicy: str('Preemption policy.', ['PreemptLowerPriority', 'Never']),
      readinessGates: list(
        obj('A condition.', { conditionType: str('Condition type.') }),
        'Extra conditions Ready waits for.',
      ),
    },
    ['containers'],
  );
}

function podStatus(): Schema {
  return obj('The observed pod, reported by the lifecycle manager.', {
    phase: str('Where the pod is in its life.', ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown']),
    conditions: keyedList(r('PodCondition'), 'type', 'PodScheduled, Initialized, ContainersReady, Ready.'),
    message: str('Why the pod is in this state, for humans.'),
    reason: str('Why the pod is in this state, in CamelCase.'),
    hostIP: str("The node's address."),
    hostIPs: list(obj('An address.', { ip: str('The IP.') }), "The node's addresses."),
    podIP: str("The pod's address (the node's with hostNetwork)."),
    podIPs: list(obj('An address.', { ip: str('The IP.') }), "The pod's addresses."),
    startTime: time('When the node accepted the pod.'),
    qosClass: str('Quality of service class from requests and limits.', [
      'Guaranteed',
      'Burstable',
      'BestEffort',
    ]),
    initContainerStatuses: list(r('ContainerStatus'), 'Init containers.'),
    containerStatuses: list(r('ContainerStatus'), 'Containers.'),
  });
}

function statusParts(): Record<string, Schema> {
  const state = (what: string) => r('ContainerState', what);
  return {
    [`${V1}PodCondition`]: obj(
      'One condition of a pod.',
      {
        type: str('Condition type.'),
        status: str('Condition status.', ['True', 'False', 'Unknown']),
        reason: str('Why, in CamelCase.'),
        message: str('Why, for humans.'),
        lastProbeTime: time('When it was last probed.'),
        lastTransitionTime: time('When the status last changed.'),
      },
      ['type', 'status'],
    ),
    [`${V1}ContainerStatus`]: obj('The observed state of one container.', {
      name: str('Container name.'),
      state: state('Current state.'),
      lastState: state('State of the previous instance.'),
      ready: bool('Whether the readiness probe passes.'),
      started: bool('Whether the startup probe passed.'),
      restartCount: int('Restarts of the container.'),
      image: str('The image.'),
      imageID: str('The image ID the runtime reports.'),
      containerID: str('Runtime and container ID (containerd://...).'),
    }),
    [`${V1}ContainerState`]: obj('Exactly one of waiting, running, terminated.', {
      waiting: obj('Not running yet.', {
        reason: str('Why (ContainerCreating, CrashLoopBackOff, ...).'),
        message: str('Details.'),
      }),
      running: obj('Running.', { startedAt: time('When it started.') }),
      terminated: obj('Exited.', {
        exitCode: int('Exit code.'),
        signal: int('Signal that ended it.'),
        reason: str('Why (Completed, Error, OOMKilled).'),
        message: str('Termination message.'),
        startedAt: time('When it started.'),
        finishedAt: time('When it exited.'),
        containerID: str('Runtime and container ID.'),
      }),
    }),
  };
}

/** The schemas of Pod and everything it refers to. */
export function podSchemas(): Record<string, Schema> {
  return {
    [`${V1}Pod`]: kind('', 'v1', 'Pod', 'A group of containers run together on this node.', {
      metadata: objectMeta(),
      spec: r('PodSpec', 'The desired pod.'),
      status: r('PodStatus', 'The observed pod; read-only but for pods/status.'),
    }),
    [`${V1}PodSpec`]: podSpec(),
    [`${V1}PodStatus`]: podStatus(),
    [`${V1}PodSecurityContext`]: obj('Security options of every container of a pod.', {
      runAsUser: int('UID to run as.', 'int64'),
      runAsGroup: int('GID to run as.', 'int64'),
      runAsNonRoot: bool('Refuse to start as UID 0.'),
      fsGroup: int('Group owning the volumes.', 'int64'),
      supplementalGroups: list(int('', 'int64'), 'Further groups of the first process.'),
    }),
    [`${V1}Toleration`]: obj('A taint the pod tolerates.', {
      key: str('Taint key; empty with Exists matches every taint.'),
      operator: str('How key and value are compared (default Equal).', ['Equal', 'Exists']),
      value: str('Taint value.'),
      effect: str('Taint effect; empty matches all.', ['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
      tolerationSeconds: int('How long a NoExecute taint is tolerated.', 'int64'),
    }),
    ...containerSchemas(),
    ...volumeSchemas(),
    ...statusParts(),
  };
}
