// The node Table as kube-apiserver renders it (printNode): NAME, STATUS, ROLES, AGE, VERSION, and
// with -o wide INTERNAL-IP, EXTERNAL-IP, OS-IMAGE, KERNEL-VERSION, CONTAINER-RUNTIME.
import { translateTimestampSince } from '../duration.ts';
import { AGE_COLUMN, column, NAME_COLUMN, type Table, type ToTableOptions, toTable } from '../table.ts';
import type { KubeObject } from '../types.ts';

export interface Node extends KubeObject {
  spec: { unschedulable?: boolean; [key: string]: unknown };
  status: {
    conditions?: { type: string; status: string }[];
    addresses?: { type: string; address: string }[];
    nodeInfo?: Record<string, string>;
    [key: string]: unknown;
  };
}

const wide = { priority: 1 };

/** A node Table. */
export function nodeTable(items: readonly Node[], now: number, opts: ToTableOptions = {}): Table {
  const columns = [
    NAME_COLUMN,
    column('Status', 'string', 'The status of the node'),
    column('Roles', 'string', 'The roles of the node'),
    AGE_COLUMN,
    column('Version', 'string', 'Kubelet Version reported by the node.'),
    column('Internal-IP', 'string', 'List of internal IPs for the node.', wide),
    column('External-IP', 'string', 'List of external IPs for the node.', wide),
    column(
      'OS-Image',
      'string',
      'OS image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).',
      wide,
    ),
    column('Kernel-Version', 'string', 'Kernel version reported by the node.', wide),
    column('Container-Runtime', 'string', 'Container runtime version reported by the node.', wide),
  ];
  return toTable(
    columns,
    items,
    (n) => {
      const ready = n.status.conditions?.find((c) => c.type === 'Ready');
      let status = ready?.status === 'True' ? 'Ready' : ready ? 'NotReady' : 'Unknown';
      if (n.spec.unschedulable) status += ',SchedulingDisabled';
      const roles = Object.keys(n.metadata.labels ?? {})
        .filter((l) => l.startsWith('node-role.kubernetes.io/'))
        .map((l) => l.slice('node-role.kubernetes.io/'.length));
      const ip = (type: string) => n.status.addresses?.find((a) => a.type === type)?.address ?? '<none>';
      const info = n.status.nodeInfo ?? {};
      return {
        cells: [
          n.metadata.name ?? '',
          status,
          roles.length ? roles.sort().join(',') : '<none>',
          translateTimestampSince(n.metadata.creationTimestamp, now),
          info.kubeletVersion ?? '',
          ip('InternalIP'),
          ip('ExternalIP'),
          info.osImage ?? '<unknown>',
          info.kernelVersion ?? '<unknown>',
          info.containerRuntimeVersion ?? '<unknown>',
        ],
      };
    },
    opts,
  );
}
