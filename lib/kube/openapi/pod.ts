// The Pod schema: the fields Outpost runs (docs/api.md), described in Outpost's words.
import { objectMeta } from './meta.ts';
import {
  bool,
  int,
  intOrString,
  kind,
  keyedList,
  list,
  map,
  obj,
  quantity,
  ref,
  type Schema,
  str,
  stringMap,
  strings,
  time,
} from './schema.ts';

export const V1 = 'io.k8s.api.core.v1.';
const r = (name: string, description?: string) => ref(`${V1}${name}`, description);

const keyRef = (what: string) =>
  obj(
    `Selects a key of a ${what}.`,
    {
      name: str(`Name of the ${what} in the pod's namespace.`),
      key: str('The key to select.'),
      optional: bool(`Whether the ${what} or its key may be missing.`),
    },
    ['key'],
  );

const keyToPath = list(r('KeyToPath'), 'Keys to project, each to a path; all keys when empty.');

function containerSchema(): Schema {
  const probe = (what: string) => r('Probe', `${what} Outpost runs the probe itself, as kubelet does.`);
  return obj(
    'One container of a pod.',
    {
      name: str('Unique within the pod (DNS label).'),
      image: str('Container image reference, pulled through the container runtime.'),
      imagePullPolicy: str('When to pull the image (default Always for :latest, else IfNotPresent).', [
        'Always',
        'IfNotPresent',
        'Never',
      ]),
      command: strings("Entrypoint; the image's ENTRYPOINT when empty. $(VAR) references are expanded."),
      args: strings("Arguments to the entrypoint; the image's CMD when empty."),
      workingDir: str("Working directory; the image's when empty."),
      env: keyedList(r('EnvVar'), 'name', 'Environment variables.'),
      envFrom: list(r('EnvFromSource'), 'Every key of a ConfigMap or Secret as variables.'),
      ports: keyedList(
        r('ContainerPort'),
        'containerPort',
        'Ports the container listens on (informational: pods use the host network).',
      ),
      resources: r('ResourceRequirements', 'CPU and memory requests and limits, passed to the runtime.'),
      volumeMounts: keyedList(
        r('VolumeMount'),
        'mountPath',
        "Pod volumes mounted into the container's filesystem.",
      ),
      livenessProbe: probe('A failing liveness probe restarts the container.'),
      readinessProbe: probe('The readiness probe sets the Ready condition.'),
      startupProbe: probe('Other probes wait until the startup probe succeeds.'),
      lifecycle: obj('Hooks around the container lifecycle.', {
        preStop: anyHandler('Runs before the container is stopped.'),
      }),
      securityContext: r('SecurityContext', 'Security options of the container.'),
      stdin: bool('Keep stdin open (kubectl attach, exec -i).'),
      stdinOnce: bool('Close stdin after the first attach ends.'),
      tty: bool('Allocate a TTY.'),
      terminationMessagePath: str('File whose content becomes the termination message.'),
      terminationMessagePolicy: str('Where the termination message comes from.', [
        'File',
        'FallbackToLogsOnError',
      ]),
    },
    ['name'],
  );
}

const anyHandler = (description: string) =>
  obj(description, {
    exec: r('ExecAction', 'Run a command in the container.'),
    httpGet: r('HTTPGetAction', 'Send an HTTP GET.'),
    tcpSocket: r('TCPSocketAction', 'Open a TCP connection.'),
  });

function volumeSchemas(): Record<string, Schema> {
  const mode = int('File mode bits of the created files (default 0644).');
  return {
    [`${V1}Volume`]: obj(
      'A named volume; exactly one source is set.',
      {
        name: str('Unique within the pod; containers mount it by this name.'),
        hostPath: obj('A file or directory of the node.', {
          path: str('Path on the node.'),
          type: str('What the path must be ("" checks nothing).', [
            '',
            'DirectoryOrCreate',
            'Directory',
            'FileOrCreate',
            'File',
            'Socket',
            'CharDevice',
            'BlockDevice',
          ]),
        }),
        emptyDir: obj('A directory that lives as long as the pod.', {
          medium: str('"" (the data directory) or "Memory" (tmpfs).'),
          sizeLimit: quantity('Size limit of the volume.'),
        }),
        configMap: obj("A ConfigMap's keys as files, refreshed when the ConfigMap changes.", {
          name: str('Name of the ConfigMap.'),
          items: keyToPath,
          defaultMode: mode,
          optional: bool('Whether the ConfigMap may be missing.'),
        }),
        secret: obj("A Secret's keys as files, refreshed when the Secret changes.", {
          secretName: str('Name of the Secret.'),
          items: keyToPath,
          defaultMode: mode,
          optional: bool('Whether the Secret may be missing.'),
        }),
        downwardAPI: obj("The pod's own fields as files.", {
          items: list(r('DownwardAPIVolumeFile'), 'Files to create.'),
          defaultMode: mode,
        }),
        projected: obj('Several sources in one directory.', {
          sources: list(
            obj('One projected source.', {
              configMap: keyRef('ConfigMap'),
              secret: keyRef('Secret'),
              downwardAPI: obj("The pod's own fields.", {
                items: list(r('DownwardAPIVolumeFile'), 'Files.'),
              }),
            }),
            'The sources.',
          ),
          defaultMode: mode,
        }),
      },
      ['name'],
    ),
    [`${V1}KeyToPath`]: obj(
      'One key projected to a file.',
      { key: str('The key.'), path: str('Relative file path.'), mode: int('File mode bits.') },
      ['key', 'path'],
    ),
    [`${V1}DownwardAPIVolumeFile`]: obj(
      'A file holding a field of the pod.',
      {
        path: str('Relative file path.'),
        fieldRef: r('ObjectFieldSelector', 'A field of the pod: metadata.name, metadata.labels, ...'),
        resourceFieldRef: r('ResourceFieldSelector', "A container's limit or request."),
        mode: int('File mode bits.'),
      },
      ['path'],
    ),
    [`${V1}VolumeMount`]: obj(
      'A volume mounted into a container.',
      {
        name: str('Name of the pod volume.'),
        mountPath: str('Path inside the container.'),
        readOnly: bool('Mount read-only.'),
        subPath: str('Mount this path of the volume instead of its root.'),
      },
      ['name', 'mountPath'],
    ),
  };
}

function containerParts(): Record<string, Schema> {
  const seconds = (what: string) => int(what);
  return {
    [`${V1}EnvVar`]: obj(
      'One environment variable.',
      {
        name: str('Variable name.'),
        value: str('The value; $(VAR) references to earlier variables are expanded.'),
        valueFrom: obj('Where the value comes from instead of value.', {
          configMapKeyRef: keyRef('ConfigMap'),
          secretKeyRef: keyRef('Secret'),
          fieldRef: r('ObjectFieldSelector', 'A field of the pod (metadata.name, status.podIP, ...).'),
          resourceFieldRef: r('ResourceFieldSelector', "A container's limit or request."),
        }),
      },
      ['name'],
    ),
    [`${V1}EnvFromSource`]: obj('Every key of a ConfigMap or Secret as environment variables.', {
      prefix: str('Prepended to every key.'),
      configMapRef: obj('The ConfigMap.', {
        name: str('Its name.'),
        optional: bool('Whether it may be missing.'),
      }),
      secretRef: obj('The Secret.', { name: str('Its name.'), optional: bool('Whether it may be missing.') }),
    }),
    [`${V1}ObjectFieldSelector`]: obj(
      'A field of the pod.',
      { apiVersion: str('Version of the field path (v1).'), fieldPath: str('Path of the field.') },
      ['fieldPath'],
    ),
    [`${V1}ResourceFieldSelector`]: obj(
      "A container's resource limit or request.",
      {
        containerName: str('The container (required in volumes).'),
        resource: str('limits.cpu, limits.memory, requests.cpu or requests.memory.'),
        divisor: quantity('Unit of the value (default 1).'),
      },
      ['resource'],
    ),
    [`${V1}ContainerPort`]: obj(
      'A port a container listens on.',
      {
        name: str('Name for the port (IANA_SVC_NAME), usable by probes.'),
        containerPort: int('Port number.'),
        hostPort: int('Port on the host (the same, with the host network).'),
        protocol: str('Protocol.', ['TCP', 'UDP', 'SCTP']),
        hostIP: str('Host IP to bind to.'),
      },
      ['containerPort'],
    ),
    [`${V1}ResourceRequirements`]: obj('Compute resources of a container.', {
      limits: map(quantity(), 'Maximum amounts (cpu, memory), enforced by the runtime.'),
      requests: map(quantity(), 'Amounts the container is guaranteed; they decide the QoS class.'),
    }),
    [`${V1}Probe`]: obj('A check run against a container.', {
      exec: r('ExecAction', 'Run a command; exit code 0 succeeds.'),
      httpGet: r('HTTPGetAction', 'A status code from 200 to 399 succeeds.'),
      tcpSocket: r('TCPSocketAction', 'A connection that opens succeeds.'),
      grpc: obj('A gRPC health check (grpc.health.v1).', {
        port: int('Port number.'),
        service: str('Service name sent in the request.'),
      }),
      initialDelaySeconds: seconds('Seconds after the start before the first probe.'),
      periodSeconds: seconds('Seconds between probes (default 10).'),
      timeoutSeconds: seconds('Seconds before a probe times out (default 1).'),
      successThreshold: int('Successes in a row that count as success (default 1).'),
      failureThreshold: int('Failures in a row that count as failure (default 3).'),
      terminationGracePeriodSeconds: int('Grace period when a failed probe stops the container.', 'int64'),
    }),
    [`${V1}ExecAction`]: obj('A command run in the container.', {
      command: strings('Command and arguments, not run in a shell.'),
    }),
    [`${V1}HTTPGetAction`]: obj(
      'An HTTP GET request.',
      {
        path: str('Request path.'),
        port: intOrString('Port number or name.'),
        host: str('Host to connect to (default the pod IP).'),
        scheme: str('Scheme.', ['HTTP', 'HTTPS']),
        httpHeaders: list(
          obj('A header.', { name: str('Header name.'), value: str('Header value.') }, ['name', 'value']),
          'Request headers.',
        ),
      },
      ['port'],
    ),
    [`${V1}TCPSocketAction`]: obj(
      'A TCP connection.',
      { port: intOrString('Port number or name.'), host: str('Host (default the pod IP).') },
      ['port'],
    ),
    [`${V1}SecurityContext`]: obj('Security options of a container.', {
      privileged: bool('Run privileged.'),
      runAsUser: int('UID to run as.', 'int64'),
      runAsGroup: int('GID to run as.', 'int64'),
      runAsNonRoot: bool('Refuse to start as UID 0.'),
      readOnlyRootFilesystem: bool('Mount the root filesystem read-only.'),
      allowPrivilegeEscalation: bool('Allow gaining more privileges than the parent process.'),
      capabilities: obj('Capabilities to add and drop.', {
        add: strings('Capabilities to add.'),
        drop: strings('Capabilities to drop.'),
      }),
    }),
  };
}

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
      hostNetwork: bool("Use the host's network namespace (pods on Outpost always do)."),
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
    podIP: str("The pod's address (the node's: host network)."),
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
    [`${V1}Container`]: containerSchema(),
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
    ...containerParts(),
    ...volumeSchemas(),
    ...statusParts(),
  };
}
