// The labels and annotations kubelet puts on CRI objects, so crictl and other CRI tools see
// Outpost's pods as ordinary Kubernetes pods, plus Outpost's own bookkeeping annotations.
export const POD_NAME = 'io.kubernetes.pod.name';
export const POD_NAMESPACE = 'io.kubernetes.pod.namespace';
export const POD_UID = 'io.kubernetes.pod.uid';
export const CONTAINER_NAME = 'io.kubernetes.container.name';
export const CONTAINER_RESTART_COUNT = 'io.kubernetes.container.restartCount';
export const CONTAINER_TYPE = 'io.kubernetes.container.type';
/** Outpost's marker: the sandbox or container was created by this metabase's Outpost. */
export const MANAGED_BY = 'outpost.io/managed-by';
/** The pod spec hash the sandbox was created for; a different hash recreates the pod. */
export const SPEC_HASH = 'outpost.io/pod-spec-hash';
/** Which container list a container belongs to: `init` or `app`. */
export const CONTAINER_KIND = 'outpost.io/container-kind';
