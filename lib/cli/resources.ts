import { usageError } from './client.ts';

export interface CliResource {
  /** Plural name as in the API path. */
  plural: string;
  kind: string;
  namespaced: boolean;
  /** Path prefix of the group version: `/api/v1` or `/apis/<group>/<version>`. */
  base: string;
}

const RESOURCES: [string[], CliResource][] = [
  [['pod', 'pods', 'po'], { plural: 'pods', kind: 'Pod', namespaced: true, base: '/api/v1' }],
  [['event', 'events', 'ev'], { plural: 'events', kind: 'Event', namespaced: true, base: '/api/v1' }],
  [
    ['namespace', 'namespaces', 'ns'],
    { plural: 'namespaces', kind: 'Namespace', namespaced: false, base: '/api/v1' },
  ],
  [
    ['device', 'devices', 'dev'],
    { plural: 'devices', kind: 'Device', namespaced: true, base: '/apis/devices.kubeedge.io/v1beta1' },
  ],
  [
    ['devicemodel', 'devicemodels'],
    {
      plural: 'devicemodels',
      kind: 'DeviceModel',
      namespaced: true,
      base: '/apis/devices.kubeedge.io/v1beta1',
    },
  ],
];

/** Resolves `pod`, `pods`, `po` (and `pod/web` forms are split by the caller) to the resource. */
export function resolveResource(name: string): CliResource {
  const found = RESOURCES.find(([aliases]) => aliases.includes(name.toLowerCase()));
  if (!found) throw usageError(`error: the server doesn't have a resource type "${name}"`);
  return found[1];
}

/** The collection path of a resource, namespaced unless `allNamespaces` or cluster-scoped. */
export function collectionPath(r: CliResource, namespace: string | undefined): string {
  return r.namespaced && namespace !== undefined
    ? `${r.base}/namespaces/${encodeURIComponent(namespace)}/${r.plural}`
    : `${r.base}/${r.plural}`;
}
