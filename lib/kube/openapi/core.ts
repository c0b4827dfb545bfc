// ConfigMap, Secret, Node, Event and Namespace schemas, and the lists of every core kind.

import { r, V1 } from './core-ref.ts';
import { META, metaSchemas, objectMeta } from './meta.ts';
import { podSchemas } from './pod.ts';
import {
  bool,
  int,
  keyedList,
  kind,
  list,
  listKind,
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

const bytes = (description: string): Schema => ({ type: 'string', format: 'byte', description });

function nodeSchemas(): Record<string, Schema> {
  const resources = (what: string) => map(quantity(), what);
  return {
    [`${V1}Node`]: kind('', 'v1', 'Node', 'This node, as Outpost measures it at each request.', {
      metadata: objectMeta(),
      spec: obj('Node settings.', {
        podCIDR: str('Pod address range (none: pods use the host network).'),
        podCIDRs: strings('Pod address ranges.'),
        providerID: str('Cloud provider ID.'),
        unschedulable: bool('Whether new pods are refused.'),
        taints: list(
          obj('A taint.', {
            key: str('Key.'),
            value: str('Value.'),
            effect: str('Effect.'),
            timeAdded: time('When added.'),
          }),
          'Taints of the node.',
        ),
      }),
      status: obj('The measured node.', {
        capacity: resources('Total cpu, memory, ephemeral-storage (the data directory) and pods.'),
        allocatable: resources('What pods may use.'),
        conditions: keyedList(
          obj('One condition.', {
            type: str('Ready, MemoryPressure, DiskPressure or PIDPressure.'),
            status: str('Condition status.', ['True', 'False', 'Unknown']),
            reason: str('Why, in CamelCase.'),
            message: str('Why, for humans.'),
            lastHeartbeatTime: time('When it was last measured.'),
            lastTransitionTime: time('When the status last changed.'),
          }),
          'type',
          'Conditions measured at each request.',
        ),
        addresses: keyedList(
          obj('An address.', { type: str('InternalIP or Hostname.'), address: str('The address.') }),
          'type',
          'Addresses of the node.',
        ),
        daemonEndpoints: obj('Ports of the node agent.', {
          kubeletEndpoint: obj('The node API.', { Port: int('Port number.') }),
        }),
        nodeInfo: obj('Software of the node.', {
          machineID: str('Machine ID.'),
          systemUUID: str('System UUID.'),
          bootID: str('Boot ID.'),
          kernelVersion: str('Kernel version (uname -r).'),
          osImage: str('OS image (/etc/os-release).'),
          containerRuntimeVersion: str('Runtime name and version, as CRI reports them.'),
          kubeletVersion: str('Version Outpost reports for its kubelet role.'),
          kubeProxyVersion: str('Not used.'),
          operatingSystem: str('Operating system (linux).'),
          architecture: str('Architecture (amd64, arm64, arm).'),
        }),
      }),
    }),
  };
}

function eventSchemas(): Record<string, Schema> {
  return {
    [`${V1}ObjectReference`]: obj('A reference to an object.', {
      apiVersion: str('API version.'),
      kind: str('Kind.'),
      namespace: str('Namespace.'),
      name: str('Name.'),
      uid: str('UID.'),
      resourceVersion: str('Version when the event was made.'),
      fieldPath: str('A part of the object, e.g. spec.containers{main}.'),
    }),
    [`${V1}Event`]: kind(
      '',
      'v1',
      'Event',
      'Something that happened to an object, aggregated like kubelet does.',
      {
        metadata: objectMeta(),
        involvedObject: r('ObjectReference', 'The object the event is about.'),
        reason: str('Why, in CamelCase (Pulled, Started, BackOff, ...).'),
        message: str('What happened, for humans.'),
        type: str('Normal or Warning.', ['Normal', 'Warning']),
        source: obj('Who reported it.', { component: str('Component (kubelet).'), host: str('Node name.') }),
        firstTimestamp: time('First occurrence.'),
        lastTimestamp: time('Latest occurrence.'),
        count: int('Occurrences.'),
        eventTime: time('When it happened, in microseconds.'),
        reportingComponent: str('Component that reported it.'),
        reportingInstance: str('Instance that reported it.'),
        action: str('What was done.'),
      },
    ),
  };
}

function configSchemas(): Record<string, Schema> {
  return {
    [`${V1}ConfigMap`]: kind('', 'v1', 'ConfigMap', 'Configuration data for pods (volumes, env).', {
      metadata: objectMeta(),
      data: stringMap('UTF-8 values by key ([-._a-zA-Z0-9]+).'),
      binaryData: map(bytes(''), 'Binary values, base64-encoded, by key.'),
      immutable: bool('When true, data and binaryData can no longer change.'),
    }),
    [`${V1}Secret`]: kind(
      '',
      'v1',
      'Secret',
      'Sensitive data for pods; read and written by the admin role only.',
      {
        metadata: objectMeta(),
        type: str('Kind of secret (default Opaque); cannot change.'),
        data: map(bytes(''), 'Values, base64-encoded, by key.'),
        stringData: stringMap('Write-only plain values, folded into data on write.'),
        immutable: bool('When true, data can no longer change.'),
      },
    ),
    [`${V1}Namespace`]: kind('', 'v1', 'Namespace', 'A namespace, implied by the objects in it.', {
      metadata: objectMeta(),
      spec: obj('Namespace settings.', { finalizers: strings('Finalizers.') }),
      status: obj('Namespace state.', { phase: str('Active or Terminating.', ['Active', 'Terminating']) }),
    }),
  };
}

const CORE_KINDS = ['Pod', 'ConfigMap', 'Secret', 'Node', 'Event', 'Namespace'];

/** Every schema of the core group version (`/openapi/v3/api/v1`). */
export function coreSchemas(): Record<string, Schema> {
  return {
    ...metaSchemas(),
    ...podSchemas(),
    ...configSchemas(),
    ...nodeSchemas(),
    ...eventSchemas(),
    ...Object.fromEntries(CORE_KINDS.map((k) => [`${V1}${k}List`, listKind('', 'v1', k, `${V1}${k}`)])),
    [`${META}Status`]: kind('', 'v1', 'Status', 'The result of a call that returns no object, or an error.', {
      metadata: ref(`${META}ListMeta`, 'Standard list metadata.'),
      status: str('Success or Failure.'),
      message: str('What happened, for humans.'),
      reason: str('Why, in CamelCase (NotFound, Conflict, Invalid, ...).'),
      details: obj('More about the failure.', {
        name: str('Name of the object.'),
        kind: str('Kind of the object.'),
        causes: list(
          obj('One cause.', {
            reason: str('Cause.'),
            message: str('Message.'),
            field: str('Field at fault.'),
          }),
          'Causes, one per field.',
        ),
      }),
      code: int('The HTTP status code.'),
    }),
  };
}
