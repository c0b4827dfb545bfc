// `kubectl describe pod` as text (k8s.io/kubectl/pkg/describe describePod), from the pod and its
// events: a pure function, so `outpost describe` prints what kubectl prints for the same objects.
import type { CoreEvent } from '#lib/kube/printers/events.ts';
import type { Pod } from '#lib/kube/types.ts';
import { qosClass } from '#lib/pods/runtime/status.ts';
import {
  describeContainers,
  describeResources,
  type Resources,
  type SpecContainer,
} from './describe-containers.ts';
import { describeVolumes, type Volume } from './describe-volumes.ts';
import {
  describeEvents,
  LEVEL_0,
  LEVEL_1,
  PrefixWriter,
  printAnnotationsMultiline,
  printLabelsMultiline,
  rfc1123z,
  since,
} from './describe-writer.ts';

interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** The parts of a v1 PodSpec that describe reads beyond the typed ones. */
interface DescribedSpec {
  priority?: number;
  priorityClassName?: string;
  runtimeClassName?: string;
  serviceAccountName?: string;
  nodeName?: string;
  securityContext?: { seccompProfile?: { type: string; localhostProfile?: string } };
  resources?: Resources;
  initContainers?: SpecContainer[];
  containers: SpecContainer[];
  ephemeralContainers?: SpecContainer[];
  readinessGates?: { conditionType: string }[];
  volumes?: Volume[];
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  topologySpreadConstraints?: {
    maxSkew: number;
    topologyKey: string;
    whenUnsatisfiable: string;
    labelSelector?: LabelSelector;
  }[];
}

function printTolerations(w: PrefixWriter, tolerations: Toleration[] | undefined): void {
  w.write(LEVEL_0, 'Tolerations:\t');
  if (!tolerations?.length) {
    w.writeLine('<none>');
    return;
  }
  const sorted = [...tolerations].sort((a, b) => ((a.key ?? '') < (b.key ?? '') ? -1 : 1));
  sorted.forEach((t, i) => {
    if (i !== 0) w.write(LEVEL_0, '\t');
    let text = t.key ?? '';
    if (t.value) text += `=${t.value}`;
    if (t.effect) text += `:${t.effect}`;
    // `operator: Exists` with no value tolerates everything (with no key and effect, literally all).
    if (t.operator === 'Exists' && !t.value) text += t.key || t.effect ? ' op=Exists' : 'op=Exists';
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null)
      text += ` for ${t.tolerationSeconds}s`;
    w.write(LEVEL_0, `${text}\n`);
  });
}

/** metav1.FormatLabelSelector: requirements sorted by key, `<none>` when it selects everything. */
function formatLabelSelector(s: LabelSelector): string {
  const reqs: [string, string][] = [];
  for (const [k, v] of Object.entries(s.matchLabels ?? {})) reqs.push([k, `${k}=${v}`]);
  for (const e of s.matchExpressions ?? []) {
    const values = [...new Set(e.values ?? [])].sort().join(',');
    if (e.operator === 'In') reqs.push([e.key, `${e.key} in (${values})`]);
    else if (e.operator === 'NotIn') reqs.push([e.key, `${e.key} notin (${values})`]);
    else if (e.operator === 'Exists') reqs.push([e.key, e.key]);
    else if (e.operator === 'DoesNotExist') reqs.push([e.key, `!${e.key}`]);
    else return '<error>';
  }
  const text = reqs
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map((r) => r[1])
    .join(',');
  return text || '<none>';
}

function describeTopologySpread(w: PrefixWriter, spec: DescribedSpec): void {
  const tscs = [...(spec.topologySpreadConstraints ?? [])].sort((a, b) =>
    a.topologyKey < b.topologyKey ? -1 : 1,
  );
  if (tscs.length === 0) return;
  w.write(LEVEL_0, 'Topology Spread Constraints:\t');
  tscs.forEach((t, i) => {
    if (i !== 0) w.write(LEVEL_0, '\t');
    const selector = t.labelSelector ? ` for selector ${formatLabelSelector(t.labelSelector)}` : '';
    w.write(
      LEVEL_0,
      `${t.topologyKey}:${t.whenUnsatisfiable} when max skew ${t.maxSkew} is exceeded${selector}\n`,
    );
  });
}

function controlledBy(pod: Pod): string {
  const refs = (pod.metadata.ownerReferences ?? []) as {
    kind?: string;
    name?: string;
    controller?: boolean;
  }[];
  const ref = refs.find((r) => r.controller === true);
  return ref ? `${ref.kind ?? ''}/${ref.name ?? ''}` : '';
}

/**
 * The text `kubectl describe pod` prints for a pod and its events (`undefined`: `--show-events=false`).
 * `now` ages the events and a terminating pod.
 */
export function describePod(pod: Pod, events: readonly CoreEvent[] | undefined, now: number): string {
  const w = new PrefixWriter();
  const spec = pod.spec as unknown as DescribedSpec;
  const status = pod.status ?? {};
  const meta = pod.metadata;
  w.write(LEVEL_0, `Name:\t${meta.name ?? ''}\n`);
  w.write(LEVEL_0, `Namespace:\t${meta.namespace ?? ''}\n`);
  if (spec.priority !== undefined && spec.priority !== null)
    w.write(LEVEL_0, `Priority:\t${spec.priority}\n`);
  if (spec.priorityClassName) w.write(LEVEL_0, `Priority Class Name:\t${spec.priorityClassName}\n`);
  if (spec.runtimeClassName) w.write(LEVEL_0, `Runtime Class Name:\t${spec.runtimeClassName}\n`);
  if (spec.serviceAccountName) w.write(LEVEL_0, `Service Account:\t${spec.serviceAccountName}\n`);
  w.write(LEVEL_0, spec.nodeName ? `Node:\t${spec.nodeName}/${status.hostIP ?? ''}\n` : 'Node:\t<none>\n');
  if (status.startTime) w.write(LEVEL_0, `Start Time:\t${rfc1123z(status.startTime)}\n`);
  printLabelsMultiline(w, 'Labels', meta.labels);
  printAnnotationsMultiline(w, 'Annotations', meta.annotations);
  if (meta.deletionTimestamp && status.phase !== 'Failed' && status.phase !== 'Succeeded') {
    w.write(LEVEL_0, `Status:\tTerminating (lasts ${since(meta.deletionTimestamp, now)})\n`);
    w.write(LEVEL_0, `Termination Grace Period:\t${meta.deletionGracePeriodSeconds ?? 0}s\n`);
  } else {
    w.write(LEVEL_0, `Status:\t${status.phase ?? ''}\n`);
  }
  if (status.reason) w.write(LEVEL_0, `Reason:\t${status.reason}\n`);
  if (status.message) w.write(LEVEL_0, `Message:\t${status.message}\n`);
  const seccomp = spec.securityContext?.seccompProfile;
  if (seccomp) {
    w.write(LEVEL_0, `SeccompProfile:\t${seccomp.type}\n`);
    if (seccomp.type === 'Localhost')
      w.write(LEVEL_0, `LocalhostProfile:\t${seccomp.localhostProfile ?? ''}\n`);
  }
  w.write(LEVEL_0, `IP:\t${status.podIP ?? ''}\n`);
  if (!status.podIPs?.length) w.write(LEVEL_0, 'IPs:\t<none>\n');
  else {
    w.write(LEVEL_0, 'IPs:\n');
    for (const ip of status.podIPs) w.write(LEVEL_1, `IP:\t${ip.ip}\n`);
  }
  const owner = controlledBy(pod);
  if (owner) w.write(LEVEL_0, `Controlled By:\t${owner}\n`);
  if (status.nominatedNodeName) w.write(LEVEL_0, `NominatedNodeName:\t${status.nominatedNodeName}\n`);
  if (spec.resources) {
    w.write(LEVEL_0, 'Resources:\n');
    describeResources(w, spec.resources, LEVEL_1);
  }
  if (spec.initContainers?.length)
    describeContainers(w, 'Init Containers', spec.initContainers, status.initContainerStatuses, pod);
  describeContainers(w, 'Containers', spec.containers ?? [], status.containerStatuses, pod);
  if (spec.ephemeralContainers?.length)
    describeContainers(
      w,
      'Ephemeral Containers',
      spec.ephemeralContainers,
      status.ephemeralContainerStatuses,
      pod,
    );
  if (spec.readinessGates?.length) {
    w.write(LEVEL_0, 'Readiness Gates:\n  Type\tStatus\n');
    for (const g of spec.readinessGates) {
      const c = status.conditions?.find((c) => c.type === g.conditionType);
      w.write(LEVEL_1, `${g.conditionType} \t${c ? c.status : '<none>'} \n`);
    }
  }
  if (status.conditions?.length) {
    w.write(LEVEL_0, 'Conditions:\n  Type\tStatus\n');
    for (const c of status.conditions) w.write(LEVEL_1, `${c.type} \t${c.status} \n`);
  }
  describeVolumes(w, spec.volumes);
  w.write(LEVEL_0, `QoS Class:\t${status.qosClass || qosClass(pod)}\n`);
  printLabelsMultiline(w, 'Node-Selectors', spec.nodeSelector);
  printTolerations(w, spec.tolerations);
  describeTopologySpread(w, spec);
  if (events) describeEvents(w, events, now);
  return w.toString();
}
