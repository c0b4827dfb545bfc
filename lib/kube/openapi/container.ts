// Container schemas (core/v1): the container itself, env, ports, resources, probes, security.

import { keyRef, r, V1 } from './core-ref.ts';
import {
  bool,
  int,
  intOrString,
  keyedList,
  list,
  map,
  obj,
  quantity,
  type Schema,
  str,
  strings,
} from './schema.ts';

/** Container and the schemas it refers to. */
export function containerSchemas(): Record<string, Schema> {
  return { [`${V1}Container`]: containerSchema(), ...containerParts() };
}

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
