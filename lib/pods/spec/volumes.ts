import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, posix, sep } from 'node:path';
import type { Pod } from '#lib/kube/types.ts';
import {
  ContainerConfigError,
  configMapEntries,
  type FieldContext,
  type Lookup,
  notFoundMessage,
  podFieldValue,
  type ResourceFieldRef,
  resourceFieldValue,
  secretEntries,
} from './env.ts';
import { TOKEN_KIND, type TokenSource, tokenName } from './references.ts';

/** A volume cannot be set up: kubelet reports it as a `FailedMount` event and the pod stays `ContainerCreating`. */
export class VolumeError extends Error {
  override name = 'VolumeError';
  readonly reason = 'FailedMount';
  constructor(
    readonly volume: string,
    detail: string,
  ) {
    super(`MountVolume.SetUp failed for volume "${volume}" : ${detail}`);
  }
}

export interface VolumeContext extends FieldContext {
  podDir: string;
  lookup: Lookup;
}

type KeyToPath = { key: string; path: string; mode?: number };
type ObjectSource = {
  name?: string;
  secretName?: string;
  items?: KeyToPath[];
  optional?: boolean;
  defaultMode?: number;
};
type FieldRef = { fieldPath: string; apiVersion?: string };
type DownwardItem = { path: string; mode?: number; fieldRef?: FieldRef; resourceFieldRef?: ResourceFieldRef };
type DownwardSource = { items?: DownwardItem[]; defaultMode?: number };
type Projection = {
  configMap?: ObjectSource;
  secret?: ObjectSource;
  downwardAPI?: DownwardSource;
  serviceAccountToken?: TokenSource;
};
type Volume = Record<string, unknown> & {
  name: string;
  hostPath?: { path: string; type?: string };
  configMap?: ObjectSource;
  secret?: ObjectSource;
  downwardAPI?: DownwardSource;
  projected?: { sources?: Projection[]; defaultMode?: number };
};
/** Which volume is being set up, for error messages and lookups. */
type Setup = { vol: string; pod: Pod; ctx: VolumeContext };

type Payload = Map<string, { data: Buffer; mode: number }>;
const DEFAULT_MODE = 0o644;
const VOLUME_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Kubelet's plugin directory names, so the layout under the pod directory reads familiar. */
const PLUGIN_DIR: Record<string, string> = {
  emptyDir: 'kubernetes.io~empty-dir',
  configMap: 'kubernetes.io~configmap',
  secret: 'kubernetes.io~secret',
  downwardAPI: 'kubernetes.io~downward-api',
  projected: 'kubernetes.io~projected',
};

/** `a//b/./c/` → `a/b/c`, as Go's path.Clean. */
const cleanPath = (p: string): string => posix.normalize(p).replace(/(.)\/+$/, '$1');

/** Rejects a relative path that is empty, absolute, steps out with `..`, or could clash with the `..data` bookkeeping. */
export function checkRelativePath(p: string): string | undefined {
  if (p === '') return 'invalid path: must not be empty';
  if (p.includes('\0')) return `invalid path: must not contain NUL: ${JSON.stringify(p)}`;
  if (posix.isAbsolute(p)) return `invalid path: must be relative path: ${p}`;
  const parts = p.split('/');
  if (parts.includes('..')) return `invalid path: must not contain '..': ${p}`;
  if (parts[0]!.startsWith('..')) return `invalid path: must not start with '..': ${p}`;
  if (parts.some((s) => s.length > 255))
    return 'invalid path: filenames must be less than or equal to 255 characters';
  if (cleanPath(p) === '.') return `invalid path: must name a file: ${p}`;
  return undefined;
}

function fileMode(vol: string, mode: number | undefined, fallback = DEFAULT_MODE): number {
  const m = mode ?? fallback;
  if (Number.isInteger(m) && m >= 0 && m <= 0o777) return m;
  throw new VolumeError(vol, `invalid mode ${m}: must be between 0 and 0777 (octal)`);
}

function objectPayload(
  { vol, pod, ctx }: Setup,
  kind: 'ConfigMap' | 'Secret',
  src: ObjectSource,
  mode: number,
): Payload {
  const name = (kind === 'Secret' ? (src.secretName ?? src.name) : src.name) ?? '';
  const optional = src.optional === true;
  const obj = ctx.lookup(kind, pod.metadata.namespace ?? 'default', name);
  if (!obj && !optional) throw new VolumeError(vol, notFoundMessage(kind, name));
  const entries = !obj
    ? new Map<string, Buffer>()
    : kind === 'Secret'
      ? secretEntries(obj)
      : configMapEntries(obj);
  const payload: Payload = new Map();
  if (!src.items?.length) {
    for (const [key, data] of entries) payload.set(key, { data, mode });
    return payload;
  }
  for (const item of src.items) {
    const data = entries.get(item.key);
    if (data) payload.set(item.path, { data, mode: fileMode(vol, item.mode, mode) });
    else if (!optional) {
      const what =
        kind === 'Secret'
          ? 'secret references non-existent secret key'
          : 'configmap references non-existent config key';
      throw new VolumeError(vol, `${what}: ${item.key}`);
    }
  }
  return payload;
}

function downwardPayload({ vol, pod, ctx }: Setup, items: DownwardItem[], mode: number): Payload {
  const payload: Payload = new Map();
  for (const item of items) {
    let value = '';
    try {
      const ref = item.resourceFieldRef;
      if (item.fieldRef) value = podFieldValue(pod, item.fieldRef, ctx);
      else if (ref) {
        const c = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].find(
          (x) => x.name === ref.containerName,
        );
        if (!c) throw new ContainerConfigError(`container ${ref.containerName ?? ''} not found`);
        value = resourceFieldValue(c, ref, ctx);
      }
    } catch (e) {
      throw new VolumeError(vol, (e as Error).message);
    }
    payload.set(item.path, { data: Buffer.from(value), mode: fileMode(vol, item.mode, mode) });
  }
  return payload;
}

/** A projected service-account token, issued for the pod by the cloud link (TokenRequest). */
function tokenPayload({ vol, pod, ctx }: Setup, src: TokenSource, mode: number): Payload {
  const stored = ctx.lookup(
    TOKEN_KIND,
    pod.metadata.namespace ?? 'default',
    tokenName(pod.metadata.uid ?? '', src),
  );
  const token = (stored as { token?: unknown } | undefined)?.token;
  if (typeof token !== 'string') {
    throw new VolumeError(vol, 'no service account token for the pod yet (the cloud link requests it)');
  }
  return new Map([[src.path, { data: Buffer.from(token), mode }]]);
}

function volumePayload(v: Volume, type: string, s: Setup): Payload {
  if (type === 'configMap')
    return objectPayload(s, 'ConfigMap', v.configMap!, fileMode(s.vol, v.configMap!.defaultMode));
  if (type === 'secret') return objectPayload(s, 'Secret', v.secret!, fileMode(s.vol, v.secret!.defaultMode));
  if (type === 'downwardAPI')
    return downwardPayload(s, v.downwardAPI!.items ?? [], fileMode(s.vol, v.downwardAPI!.defaultMode));
  const mode = fileMode(s.vol, v.projected!.defaultMode);
  const merged: Payload = new Map();
  for (const src of v.projected!.sources ?? []) {
    const part = src.configMap
      ? objectPayload(s, 'ConfigMap', src.configMap, mode)
      : src.secret
        ? objectPayload(s, 'Secret', src.secret, mode)
        : src.downwardAPI
          ? downwardPayload(s, src.downwardAPI.items ?? [], mode)
          : src.serviceAccountToken
            ? tokenPayload(s, src.serviceAccountToken, mode)
            : undefined;
    if (!part)
      throw new VolumeError(
        s.vol,
        `projected source ${Object.keys(src).join(', ') || '(empty)'} is not supported by Outpost`,
      );
    for (const [k, f] of part) merged.set(k, f); // later sources win, as kubelet merges them
  }
  return merged;
}

/**
 * Writes a payload the way kubelet's AtomicWriter does: files go into a fresh `..<time>.<hash>`
 * directory, then the `..data` symlink is swapped to it with a rename, and each top-level name is
 * a symlink through `..data`. The volume directory itself is what gets bind-mounted, so a running
 * container sees either the old or the new set of files, never a half-written one. An unchanged
 * payload (same hash) is left alone.
 */
async function writeAtomically(vol: string, dir: string, raw: Payload): Promise<void> {
  const payload: Payload = new Map();
  for (const [p, f] of raw) {
    const bad = checkRelativePath(p);
    if (bad) throw new VolumeError(vol, bad);
    payload.set(cleanPath(p), f);
  }
  const hash = createHash('sha256');
  for (const [p, f] of [...payload].sort(([a], [b]) => (a < b ? -1 : 1))) {
    hash.update(`${p}\0${f.mode}\0${f.data.length}\0`).update(f.data);
  }
  const digest = hash.digest('hex').slice(0, 16);
  await fs.mkdir(dir, { recursive: true, mode: 0o755 });
  const current = await fs.readlink(join(dir, '..data')).catch(() => undefined);
  if (current?.endsWith(`.${digest}`)) return;
  const target = `..${new Date().toISOString().slice(0, 19).replace(/[-:T]/g, '_')}.${digest}`;
  await fs.rm(join(dir, target), { recursive: true, force: true });
  await fs.mkdir(join(dir, target), { mode: 0o755 });
  for (const [p, f] of payload) {
    const file = join(dir, target, p);
    await fs.mkdir(dirname(file), { recursive: true, mode: 0o755 });
    await fs.writeFile(file, f.data, { mode: f.mode });
    await fs.chmod(file, f.mode); // writeFile's mode is filtered by the umask
  }
  await fs.rm(join(dir, '..data_tmp'), { force: true });
  await fs.symlink(target, join(dir, '..data_tmp'));
  await fs.rename(join(dir, '..data_tmp'), join(dir, '..data'));
  const tops = new Set([...payload.keys()].map((p) => p.split('/')[0]!));
  for (const top of tops) {
    const link = join(dir, top);
    const st = await fs.lstat(link).catch(() => undefined);
    if (st?.isSymbolicLink()) continue;
    if (st) await fs.rm(link, { recursive: true, force: true });
    await fs.symlink(posix.join('..data', top), link);
  }
  for (const name of await fs.readdir(dir)) {
    const stale = name.startsWith('..') ? name !== '..data' && name !== target : !tops.has(name);
    if (stale) await fs.rm(join(dir, name), { recursive: true, force: true });
  }
}

const HOST_PATH_CHECKS: Record<string, [(s: import('node:fs').Stats) => boolean, string]> = {
  Directory: [(s) => s.isDirectory(), 'is not a directory'],
  DirectoryOrCreate: [(s) => s.isDirectory(), 'is not a directory'],
  File: [(s) => s.isFile(), 'is not a file'],
  FileOrCreate: [(s) => s.isFile(), 'is not a file'],
  Socket: [(s) => s.isSocket(), 'is not a socket file'],
  CharDevice: [(s) => s.isCharacterDevice(), 'is not a character device'],
  BlockDevice: [(s) => s.isBlockDevice(), 'is not a block device'],
};

async function hostPathVolume(vol: string, src: { path: string; type?: string }): Promise<string> {
  if (typeof src.path !== 'string' || !isAbsolute(src.path)) {
    throw new VolumeError(vol, `hostPath ${JSON.stringify(src.path)} must be an absolute path`);
  }
  const path = normalize(src.path);
  const type = src.type ?? '';
  if (type === '') return path; // no check, for backwards compatibility (HostPathUnset)
  const check = Object.hasOwn(HOST_PATH_CHECKS, type) ? HOST_PATH_CHECKS[type] : undefined;
  if (!check) throw new VolumeError(vol, `${type} is an invalid volume type`);
  let st = await fs.stat(path).catch(() => undefined);
  try {
    if (!st && type === 'DirectoryOrCreate') await fs.mkdir(path, { recursive: true, mode: 0o755 });
    if (!st && type === 'FileOrCreate') await fs.writeFile(path, '', { flag: 'wx', mode: 0o644 });
  } catch (e) {
    throw new VolumeError(vol, (e as Error).message);
  }
  st ??= await fs.stat(path).catch(() => undefined);
  if (!st || !check[0](st)) throw new VolumeError(vol, `hostPath type check failed: ${path} ${check[1]}`);
  return path;
}

async function setUp(v: Volume, type: string, root: string, pod: Pod, ctx: VolumeContext): Promise<string> {
  if (type === 'hostPath') return hostPathVolume(v.name, v.hostPath!);
  if (!Object.hasOwn(PLUGIN_DIR, type)) {
    throw new VolumeError(
      v.name,
      `${type} volumes are not supported by Outpost (supported: hostPath, ${Object.keys(PLUGIN_DIR).join(', ')})`,
    );
  }
  const dir = join(root, PLUGIN_DIR[type]!, v.name);
  if (!dir.startsWith(root + sep))
    throw new VolumeError(v.name, 'volume directory escapes the pod directory');
  // Secrets sit on disk here (kubelet uses tmpfs): keep other host users out of the tree.
  await fs.mkdir(root, { recursive: true, mode: 0o750 });
  if (type === 'emptyDir') {
    await fs.mkdir(dir, { recursive: true });
    await fs.chmod(dir, 0o777); // any container user may write, as kubelet's emptyDir does
  } else {
    await writeAtomically(v.name, dir, volumePayload(v, type, { vol: v.name, pod, ctx }));
  }
  return dir;
}

/**
 * Materializes the pod's volumes under `podDir/volumes/` and returns volume name → host path.
 * Safe to call again: emptyDirs keep their contents, API-data volumes are updated atomically.
 * `emptyDir.medium: Memory` is a plain directory here (mounting tmpfs would need the agent to own
 * mount namespaces); `sizeLimit` is not enforced.
 */
export async function prepareVolumes(pod: Pod, ctx: VolumeContext): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const root = join(ctx.podDir, 'volumes');
  for (const v of (pod.spec.volumes ?? []) as Volume[]) {
    const name = String(v?.name ?? '');
    if (name.length > 63 || !VOLUME_NAME.test(name)) {
      throw new VolumeError(name, 'invalid volume name: must be a lowercase RFC 1123 label');
    }
    if (out.has(name)) throw new VolumeError(name, 'duplicate volume name');
    const sources = Object.keys(v).filter((k) => k !== 'name' && v[k] != null);
    // The API server defaults a volume without a source to an emptyDir.
    const type = sources[0] ?? 'emptyDir';
    if (sources.length > 1)
      throw new VolumeError(name, `may not specify more than 1 volume type (${sources.join(', ')})`);
    try {
      out.set(name, await setUp(v, type, root, pod, ctx));
    } catch (e) {
      throw e instanceof VolumeError ? e : new VolumeError(name, (e as Error).message);
    }
  }
  return out;
}

/** Removes the pod's volume directories (never hostPath targets: they live outside), then the pod directory if empty. */
export async function cleanupVolumes(podDir: string): Promise<void> {
  await fs.rm(join(podDir, 'volumes'), { recursive: true, force: true });
  await fs.rmdir(podDir).catch(() => undefined);
}
