import type { StatusCause } from '#lib/kube/status.ts';
import type { Container, Pod } from '#lib/kube/types.ts';
import { checkDnsLabel, checkDnsSubdomain } from '#lib/kube/validate.ts';

/** Fills the fields the API server and kubelet default for a static pod, in place, and returns it. */
export function defaultPod(pod: Pod, nodeName: string): Pod {
  pod.apiVersion = 'v1';
  pod.kind = 'Pod';
  pod.metadata.namespace ||= 'default';
  pod.spec.nodeName ||= nodeName;
  pod.spec.restartPolicy ??= 'Always';
  pod.spec.terminationGracePeriodSeconds ??= 30;
  pod.spec.dnsPolicy ??= 'ClusterFirst';
  pod.spec.schedulerName ??= 'default-scheduler';
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) defaultContainer(c);
  return pod;
}

function defaultContainer(c: Container): void {
  const image = c.image ?? '';
  const digest = image.includes('@');
  const tag = /:([^/:]+)$/.exec(image)?.[1];
  c.imagePullPolicy ??= !digest && (!tag || tag === 'latest') ? 'Always' : 'IfNotPresent';
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  // The API server's defaults, so `describe` and probes read the same values kubectl expects.
  for (const port of (c.ports ?? []) as { protocol?: string }[]) port.protocol ??= 'TCP';
  for (const key of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
    const probe = c[key] as Record<string, unknown> | undefined;
    if (!probe || typeof probe !== 'object') continue;
    probe.timeoutSeconds ??= 1;
    probe.periodSeconds ??= 10;
    probe.successThreshold ??= 1;
    probe.failureThreshold ??= 3;
    const http = probe.httpGet as Record<string, unknown> | undefined;
    if (http && typeof http === 'object') {
      http.path ??= '/';
      http.scheme ??= 'HTTP';
    }
  }
  for (const env of (c.env ?? []) as { valueFrom?: { fieldRef?: { apiVersion?: string } } }[]) {
    if (env.valueFrom?.fieldRef) env.valueFrom.fieldRef.apiVersion ??= 'v1';
  }
}

/** The API server's checks that matter on a node: names, containers, images, restart policy. */
export function validatePod(pod: Pod): StatusCause[] {
  const causes: StatusCause[] = [
    ...checkDnsSubdomain(pod.metadata?.name, 'metadata.name'),
    ...checkDnsLabel(pod.metadata?.namespace || 'default', 'metadata.namespace'),
  ];
  const spec = pod.spec as Pod['spec'] | undefined;
  if (!spec || typeof spec !== 'object') {
    return [...causes, { field: 'spec', reason: 'FieldValueRequired', message: 'Required value' }];
  }
  if (!Array.isArray(spec.containers) || spec.containers.length === 0) {
    causes.push({ field: 'spec.containers', reason: 'FieldValueRequired', message: 'Required value' });
  }
  const seen = new Set<string>();
  const lists = [
    ['initContainers', spec.initContainers ?? []],
    ['containers', spec.containers ?? []],
  ] as const;
  for (const [list, items] of lists) {
    if (!Array.isArray(items)) {
      causes.push({ field: `spec.${list}`, reason: 'FieldValueTypeInvalid', message: 'must be a list' });
      continue;
    }
    items.forEach((c, i) => {
      const field = `spec.${list}[${i}]`;
      causes.push(...checkDnsLabel(c?.name, `${field}.name`));
      if (c?.name && seen.has(c.name)) {
        causes.push({
          field: `${field}.name`,
          reason: 'FieldValueDuplicate',
          message: `Duplicate value: "${c.name}"`,
        });
      }
      if (c?.name) seen.add(c.name);
      if (typeof c?.image !== 'string' || c.image.trim() === '') {
        causes.push({ field: `${field}.image`, reason: 'FieldValueRequired', message: 'Required value' });
      }
    });
  }
  const policy = spec.restartPolicy;
  if (policy !== undefined && !['Always', 'OnFailure', 'Never'].includes(policy)) {
    causes.push({
      field: 'spec.restartPolicy',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: "${policy}": supported values: "Always", "OnFailure", "Never"`,
    });
  }
  return causes;
}

/**
 * What the API server adds to a pod created through it besides `defaultPod` (defaulting and the
 * ServiceAccount and Priority admission plugins), in place: applied to API-created pods only, so
 * that a manifest pod's spec, and so its hash, does not change.
 */
export function apiPodDefaults(pod: Pod): Pod {
  const spec = pod.spec;
  spec.serviceAccountName ??= (spec.serviceAccount as string | undefined) ?? 'default';
  spec.serviceAccount ??= spec.serviceAccountName;
  spec.securityContext ??= {};
  spec.enableServiceLinks ??= true;
  spec.priority ??= 0;
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) c.resources ??= {};
  return pod;
}
