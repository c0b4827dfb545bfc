// The Volumes block of `kubectl describe pod` (describeVolumes), for the volume types a node agent
// meets; any other type prints `<unknown>`, as kubectl does for types it does not know.
import { formatQuantity } from '#lib/kube/quantity-format.ts';
import { LEVEL_0, LEVEL_1, LEVEL_2, LEVEL_3, type PrefixWriter } from './describe-writer.ts';

type Optional = { optional?: boolean };
interface KeyToPath {
  path: string;
  fieldRef?: { fieldPath: string };
  resourceFieldRef?: { resource: string };
}

/** The fields of a v1 Volume that describe reads. */
export interface Volume {
  name: string;
  hostPath?: { path: string; type?: string };
  emptyDir?: { medium?: string; sizeLimit?: string | number };
  secret?: { secretName?: string } & Optional;
  configMap?: { name?: string } & Optional;
  downwardAPI?: { items?: KeyToPath[] };
  projected?: {
    sources?: {
      secret?: { name?: string } & Optional;
      configMap?: { name?: string } & Optional;
      downwardAPI?: unknown;
      serviceAccountToken?: { expirationSeconds?: number };
    }[];
  };
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  nfs?: { server: string; path: string; readOnly?: boolean };
  csi?: { driver: string; fsType?: string; readOnly?: boolean; volumeAttributes?: Record<string, string> };
}

const bool = (v: boolean | undefined) => String(v === true);
// kubectl 1.32 prints a projected source's `optional` pointer with %v: `<nil>` when unset (and the
// pointer's address when set, which cannot be reproduced: Outpost prints the value there).
const pointer = (v: boolean | undefined) => (v === undefined || v === null ? '<nil>' : String(v));

function csiAttributes(w: PrefixWriter, attributes: Record<string, string> | undefined): void {
  w.write(LEVEL_2, 'VolumeAttributes:\t');
  const keys = Object.keys(attributes ?? {}).sort();
  if (keys.length === 0) {
    w.writeLine('<none>');
    return;
  }
  keys.forEach((key, i) => {
    // As kubectl: each continuation write gets the level's indent again, before the tab.
    if (i !== 0) w.write(LEVEL_2, '\t');
    const line = `${key}=${attributes![key]}`;
    w.write(
      LEVEL_2,
      byteLength(line) > 140 ? `${Buffer.from(line).subarray(0, 140).toString()}...\n` : `${line}\n`,
    );
  });
}

const byteLength = (s: string) => Buffer.byteLength(s);

function volumeType(w: PrefixWriter, v: Volume): void {
  if (v.hostPath) {
    const type = v.hostPath.type ?? '<none>';
    w.write(LEVEL_2, `Type:\tHostPath (bare host directory volume)\n    Path:\t${v.hostPath.path}\n`);
    w.write(LEVEL_2, `HostPathType:\t${type}\n`);
  } else if (v.emptyDir) {
    const limit = v.emptyDir.sizeLimit;
    const size = limit !== undefined && formatQuantity(limit) !== '0' ? formatQuantity(limit) : '<unset>';
    w.write(LEVEL_2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n");
    w.write(LEVEL_2, `Medium:\t${v.emptyDir.medium ?? ''}\n    SizeLimit:\t${size}\n`);
  } else if (v.secret) {
    w.write(LEVEL_2, 'Type:\tSecret (a volume populated by a Secret)\n');
    w.write(
      LEVEL_2,
      `SecretName:\t${v.secret.secretName ?? ''}\n    Optional:\t${bool(v.secret.optional)}\n`,
    );
  } else if (v.configMap) {
    w.write(LEVEL_2, 'Type:\tConfigMap (a volume populated by a ConfigMap)\n');
    w.write(LEVEL_2, `Name:\t${v.configMap.name ?? ''}\n    Optional:\t${bool(v.configMap.optional)}\n`);
  } else if (v.downwardAPI) {
    w.write(LEVEL_2, 'Type:\tDownwardAPI (a volume populated by information about the pod)\n    Items:\n');
    for (const item of v.downwardAPI.items ?? []) {
      if (item.fieldRef) w.write(LEVEL_3, `${item.fieldRef.fieldPath} -> ${item.path}\n`);
      if (item.resourceFieldRef) w.write(LEVEL_3, `${item.resourceFieldRef.resource} -> ${item.path}\n`);
    }
  } else if (v.projected) {
    w.write(LEVEL_2, 'Type:\tProjected (a volume that contains injected data from multiple sources)\n');
    for (const s of v.projected.sources ?? []) {
      if (s.secret) {
        w.write(
          LEVEL_2,
          `SecretName:\t${s.secret.name ?? ''}\n    SecretOptionalName:\t${pointer(s.secret.optional)}\n`,
        );
      } else if (s.downwardAPI) {
        w.write(LEVEL_2, 'DownwardAPI:\ttrue\n');
      } else if (s.configMap) {
        w.write(
          LEVEL_2,
          `ConfigMapName:\t${s.configMap.name ?? ''}\n    ConfigMapOptional:\t${pointer(s.configMap.optional)}\n`,
        );
      } else if (s.serviceAccountToken) {
        w.write(LEVEL_2, `TokenExpirationSeconds:\t${s.serviceAccountToken.expirationSeconds ?? 0}\n`);
      }
    }
  } else if (v.persistentVolumeClaim) {
    const c = v.persistentVolumeClaim;
    w.write(
      LEVEL_2,
      'Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n',
    );
    w.write(LEVEL_2, `ClaimName:\t${c.claimName}\n    ReadOnly:\t${bool(c.readOnly)}\n`);
  } else if (v.nfs) {
    w.write(LEVEL_2, 'Type:\tNFS (an NFS mount that lasts the lifetime of a pod)\n');
    w.write(
      LEVEL_2,
      `Server:\t${v.nfs.server}\n    Path:\t${v.nfs.path}\n    ReadOnly:\t${bool(v.nfs.readOnly)}\n`,
    );
  } else if (v.csi) {
    w.write(LEVEL_2, 'Type:\tCSI (a Container Storage Interface (CSI) volume source)\n');
    w.write(LEVEL_2, `Driver:\t${v.csi.driver}\n    FSType:\t${v.csi.fsType ?? ''}\n`);
    w.write(LEVEL_2, `ReadOnly:\t${bool(v.csi.readOnly)}\n`);
    csiAttributes(w, v.csi.volumeAttributes);
  } else {
    w.write(LEVEL_1, '<unknown>\n');
  }
}

/** `Volumes:` with each volume's name and source, or `Volumes: <none>`. */
export function describeVolumes(w: PrefixWriter, volumes: readonly Volume[] | undefined): void {
  if (!volumes?.length) {
    w.write(LEVEL_0, 'Volumes:\t<none>\n');
    return;
  }
  w.write(LEVEL_0, 'Volumes:\n');
  for (const v of volumes) {
    w.write(LEVEL_1, `${v.name}:\n`);
    volumeType(w, v);
  }
}
