/** One entry of an APIResourceList (metav1.APIResource). */
export interface ApiResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  /** A subresource whose kind lives in another group (pods/eviction: policy/v1 Eviction). */
  group?: string;
  version?: string;
}

/** What Outpost serves in the core group, as `/api/v1` advertises it to kubectl. */
const WRITE_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export const coreResources: ApiResource[] = [
  {
    name: 'configmaps',
    singularName: 'configmap',
    namespaced: true,
    kind: 'ConfigMap',
    verbs: WRITE_VERBS,
    shortNames: ['cm'],
  },
  {
    name: 'events',
    singularName: 'event',
    namespaced: true,
    kind: 'Event',
    verbs: ['get', 'list', 'watch'],
    shortNames: ['ev'],
  },
  {
    name: 'namespaces',
    singularName: 'namespace',
    namespaced: false,
    kind: 'Namespace',
    verbs: ['get', 'list'],
    shortNames: ['ns'],
  },
  {
    name: 'nodes',
    singularName: 'node',
    namespaced: false,
    kind: 'Node',
    verbs: ['get', 'list', 'watch'],
    shortNames: ['no'],
  },
  {
    name: 'pods',
    singularName: 'pod',
    namespaced: true,
    kind: 'Pod',
    verbs: WRITE_VERBS,
    shortNames: ['po'],
    categories: ['all'],
  },
  {
    name: 'pods/eviction',
    singularName: '',
    namespaced: true,
    group: 'policy',
    version: 'v1',
    kind: 'Eviction',
    verbs: ['create'],
  },
  { name: 'pods/exec', singularName: '', namespaced: true, kind: 'PodExecOptions', verbs: ['create', 'get'] },
  { name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
  {
    name: 'pods/portforward',
    singularName: '',
    namespaced: true,
    kind: 'PodPortForwardOptions',
    verbs: ['create', 'get'],
  },
  { name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] },
  { name: 'secrets', singularName: 'secret', namespaced: true, kind: 'Secret', verbs: WRITE_VERBS },
];

/** API groups beyond the core group: KubeEdge's device CRDs (edits of a device go through its mapper). */
export const apiGroups: { name: string; version: string; resources: ApiResource[] }[] = [
  {
    name: 'devices.kubeedge.io',
    version: 'v1beta1',
    resources: [
      {
        name: 'devicemodels',
        singularName: 'devicemodel',
        namespaced: true,
        kind: 'DeviceModel',
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      },
      {
        name: 'devices',
        singularName: 'device',
        namespaced: true,
        kind: 'Device',
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
        shortNames: ['dev'],
      },
    ],
  },
  {
    name: 'metrics.k8s.io',
    version: 'v1beta1',
    resources: [
      { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
      { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
    ],
  },
];
