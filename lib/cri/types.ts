// CRI runtime.v1 messages as CriClient sends and receives them (proto/cri/api.proto, camelCase).
// Requests may leave any field out. Responses are decoded with defaults: every scalar, list and
// map is present, an unset message is null, enums are their names and 64-bit integers are
// decimal strings (they do not fit a JS number in general: timestamps are nanoseconds).

/** A 64-bit integer as decoded from the runtime. */
export type Int64 = string;
/** A 64-bit integer as sent to the runtime. */
export type Int64Input = number | string;
export type StringMap = Record<string, string>;

export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';
export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
export type ContainerState =
  | 'CONTAINER_CREATED'
  | 'CONTAINER_RUNNING'
  | 'CONTAINER_EXITED'
  | 'CONTAINER_UNKNOWN';
export type MountPropagation =
  | 'PROPAGATION_PRIVATE'
  | 'PROPAGATION_HOST_TO_CONTAINER'
  | 'PROPAGATION_BIDIRECTIONAL';
export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export interface NamespaceOption {
  network?: NamespaceMode;
  pid?: NamespaceMode;
  ipc?: NamespaceMode;
  targetId?: string;
}

export interface SecurityProfile {
  profileType?: 'RuntimeDefault' | 'Unconfined' | 'Localhost';
  localhostRef?: string;
}

export interface ImageSpec {
  image: string;
  annotations?: StringMap;
}

export interface LinuxContainerResources {
  cpuPeriod?: Int64Input;
  cpuQuota?: Int64Input;
  cpuShares?: Int64Input;
  memoryLimitInBytes?: Int64Input;
  oomScoreAdj?: Int64Input;
  cpusetCpus?: string;
  cpusetMems?: string;
  unified?: StringMap;
  memorySwapLimitInBytes?: Int64Input;
}

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt?: number;
}

export interface PortMapping {
  protocol?: Protocol;
  containerPort: number;
  hostPort?: number;
  hostIp?: string;
}

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  /** Leave empty for pods in the node's network namespace: runc cannot set it without a UTS namespace. */
  hostname?: string;
  logDirectory?: string;
  dnsConfig?: { servers?: string[]; searches?: string[]; options?: string[] };
  portMappings?: PortMapping[];
  labels?: StringMap;
  annotations?: StringMap;
  linux?: {
    cgroupParent?: string;
    sysctls?: StringMap;
    securityContext?: {
      namespaceOptions?: NamespaceOption;
      runAsUser?: { value: Int64Input };
      runAsGroup?: { value: Int64Input };
      readonlyRootfs?: boolean;
      supplementalGroups?: Int64Input[];
      privileged?: boolean;
      seccomp?: SecurityProfile;
      apparmor?: SecurityProfile;
    };
  };
}

export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly?: boolean;
  selinuxRelabel?: boolean;
  propagation?: MountPropagation;
}

export interface LinuxContainerSecurityContext {
  capabilities?: {
    addCapabilities?: string[];
    dropCapabilities?: string[];
    addAmbientCapabilities?: string[];
  };
  privileged?: boolean;
  namespaceOptions?: NamespaceOption;
  runAsUser?: { value: Int64Input };
  runAsGroup?: { value: Int64Input };
  runAsUsername?: string;
  readonlyRootfs?: boolean;
  supplementalGroups?: Int64Input[];
  noNewPrivs?: boolean;
  maskedPaths?: string[];
  readonlyPaths?: string[];
  seccomp?: SecurityProfile;
  apparmor?: SecurityProfile;
}

export interface ContainerConfig {
  metadata: { name: string; attempt?: number };
  image: ImageSpec;
  command?: string[];
  args?: string[];
  workingDir?: string;
  envs?: { key: string; value: string }[];
  mounts?: Mount[];
  devices?: { containerPath: string; hostPath: string; permissions: string }[];
  labels?: StringMap;
  annotations?: StringMap;
  /** Relative to the sandbox's logDirectory, e.g. `web/0.log`. */
  logPath?: string;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  linux?: { resources?: LinuxContainerResources; securityContext?: LinuxContainerSecurityContext };
}

export interface PodSandboxFilter {
  id?: string;
  state?: { state: PodSandboxState };
  labelSelector?: StringMap;
}

export interface ContainerFilter {
  id?: string;
  state?: { state: ContainerState };
  podSandboxId?: string;
  labelSelector?: StringMap;
}

export interface ExecRequest {
  containerId: string;
  cmd: string[];
  tty?: boolean;
  stdin?: boolean;
  stdout?: boolean;
  stderr?: boolean;
}

export interface AttachRequest {
  containerId: string;
  stdin?: boolean;
  tty?: boolean;
  stdout?: boolean;
  stderr?: boolean;
}

/** A uint64 as the decoder gives it (a decimal string), absent when the runtime did not set it. */
export type UInt64Value = { value: string } | null;

/** One container's usage (CRI ContainerStats); timestamps in ns since the epoch, as strings. */
export interface ContainerStats {
  attributes: {
    id: string;
    metadata: { name: string; attempt: number } | null;
    labels: StringMap;
    annotations: StringMap;
  } | null;
  cpu: { timestamp: string; usageCoreNanoSeconds: UInt64Value; usageNanoCores: UInt64Value } | null;
  memory: {
    timestamp: string;
    workingSetBytes: UInt64Value;
    availableBytes: UInt64Value;
    usageBytes: UInt64Value;
    rssBytes: UInt64Value;
    pageFaults: UInt64Value;
    majorPageFaults: UInt64Value;
  } | null;
  writableLayer: {
    timestamp: string;
    fsId: { mountpoint: string } | null;
    usedBytes: UInt64Value;
    inodesUsed: UInt64Value;
  } | null;
}

export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

// ---- Responses ----

export interface VersionResponse {
  version: string;
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

export interface RuntimeStatusResult {
  conditions: RuntimeCondition[];
  /** JSON strings keyed by topic; only filled when asked for verbosely. */
  info: StringMap;
}

export interface DecodedImageSpec {
  image: string;
  annotations: StringMap;
}

export interface DecodedMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}

export interface PodSandbox {
  id: string;
  metadata: DecodedMetadata | null;
  state: PodSandboxState;
  createdAt: Int64;
  labels: StringMap;
  annotations: StringMap;
  runtimeHandler: string;
}

export interface PodSandboxStatus extends PodSandbox {
  /** The pod IP; empty for pods in the node's network namespace. */
  network: { ip: string; additionalIps: { ip: string }[] } | null;
  linux: { namespaces: { options: Required<NamespaceOption> | null } | null } | null;
}

export interface Container {
  id: string;
  podSandboxId: string;
  metadata: { name: string; attempt: number } | null;
  image: DecodedImageSpec | null;
  imageRef: string;
  state: ContainerState;
  createdAt: Int64;
  labels: StringMap;
  annotations: StringMap;
}

export interface ContainerStatus {
  id: string;
  metadata: { name: string; attempt: number } | null;
  state: ContainerState;
  /** Nanoseconds since the epoch; '0' while not reached. */
  createdAt: Int64;
  startedAt: Int64;
  finishedAt: Int64;
  exitCode: number;
  image: DecodedImageSpec | null;
  imageRef: string;
  /** CamelCase, e.g. `Completed`, `Error`, `OOMKilled`. */
  reason: string;
  message: string;
  labels: StringMap;
  annotations: StringMap;
  mounts: Required<Mount>[];
  logPath: string;
}

export interface ExecSyncResult {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  /** Bytes, as a decimal string (uint64). */
  size: Int64;
  uid: { value: Int64 } | null;
  username: string;
  spec: DecodedImageSpec | null;
  pinned: boolean;
}
