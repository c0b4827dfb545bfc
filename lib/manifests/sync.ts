import { createHash } from 'node:crypto';
import { type FSWatcher, readdirSync, readFileSync, statSync, watch } from 'node:fs';
import { basename, join } from 'node:path';
import type { KubeObject, Pod } from '#lib/kube/types.ts';
import type { Logger } from '#lib/log.ts';
import { defaultPod, validatePod } from '#lib/pods/spec/defaults.ts';
import type { Store } from '#lib/store/index.ts';
import { applyDeviceManifest, DEVICE_KINDS, deviceManifestProblem, removeStaleDevices } from './devices.ts';
import { MANIFEST_LIMITS, MiB } from './limits.ts';
import { type ManifestProblem, parseManifest } from './parse.ts';

const MANIFEST_FILE = /^[^.].*\.(ya?ml|json)$/i;
/** Kinds a manifest may hold besides Pod and the device kinds (stored for volumes). */
const OBJECT_KINDS = new Set(['ConfigMap', 'Secret']);

export interface SyncReport {
  files: number;
  applied: number;
  removed: number;
  problems: ManifestProblem[];
}

interface FileOutcome {
  signature: string;
  keys: Set<string>;
  problems: ManifestProblem[];
  poisoned: boolean;
}

export interface ManifestSyncOptions {
  dir: string;
  nodeName: string;
  store: Store;
  log: Logger;
  /** How a pod whose manifest is gone leaves: removed at once, or marked terminating for the lifecycle manager. */
  removePod?: (namespace: string, name: string) => void;
}

/**
 * Keeps the metabase in step with a directory of static manifests, like kubelet's staticPodPath:
 * a bad file is reported and skipped, never removing what it defined before.
 */
export class ManifestSync {
  readonly #o: ManifestSyncOptions;
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #poll: NodeJS.Timeout | undefined;
  /** The problems last reported for each file. */
  #reported = new Map<string, string>();
  /**
   * Each file's outcome by its stat signature: an unchanged file is not read or parsed again (the
   * rescan every few seconds would otherwise re-parse megabytes, and objects from manifests cannot
   * be changed through the API). Outcomes that depend on other files are not kept.
   */
  #seen = new Map<string, FileOutcome>();

  /** The sync running or last run: each waits for the one before (the watcher's and the caller's). */
  #last: Promise<unknown> = Promise.resolve();

  constructor(opts: ManifestSyncOptions) {
    this.#o = opts;
  }

  /**
   * Reads every manifest once and applies the differences to the metabase. Asynchronous only to
   * load the YAML parser at the first file that is not plain JSON (parse.ts); two syncs never
   * interleave, so a file read earlier is never applied after one read later.
   */
  sync(): Promise<SyncReport> {
    const run = this.#last.then(() => this.#sync());
    this.#last = run.catch(() => undefined);
    return run;
  }

  async #sync(): Promise<SyncReport> {
    const { dir } = this.#o;
    const report: SyncReport = { files: 0, applied: 0, removed: 0, problems: [] };
    const files = readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isFile() && MANIFEST_FILE.test(d.name))
      .map((d) => join(dir, d.name))
      .sort();
    const keep = new Map<string, Set<string>>(); // file -> keys defined there now
    const poisoned = new Set<string>(); // files whose previous objects must stay
    const claimed = new Map<string, string>(); // key -> file that defined it first
    for (const file of files) {
      report.files++;
      const keys = new Set<string>();
      const problems: ManifestProblem[] = [];
      try {
        if (await this.#syncFile(file, keys, claimed, problems, report)) poisoned.add(file);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue; // removed since the listing
        // Whatever a file's content does (a parser's RangeError, a value the store cannot take) is
        // that file's error: the module goes on with the next file.
        problems.push({ file, message: (e as Error).message });
        poisoned.add(file);
      }
      report.problems.push(...problems);
      keep.set(file, keys);
    }
    for (const f of this.#seen.keys()) if (!keep.has(f)) this.#seen.delete(f);
    report.removed = this.#removeStale(keep, poisoned);
    this.#log(report);
    return report;
  }

  async #syncFile(
    file: string,
    keys: Set<string>,
    claimed: Map<string, string>,
    problems: ManifestProblem[],
    report: SyncReport,
  ): Promise<boolean> {
    const { store, nodeName } = this.#o;
    const st = statSync(file);
    const signature = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    const seen = this.#seen.get(file);
    if (seen?.signature === signature && [...seen.keys].every((k) => !claimed.has(k))) {
      for (const k of seen.keys) {
        claimed.set(k, file);
        keys.add(k);
      }
      problems.push(...seen.problems);
      return seen.poisoned;
    }
    this.#seen.delete(file);
    const remember = (poisoned: boolean) => {
      this.#seen.set(file, { signature, keys: new Set(keys), problems: [...problems], poisoned });
      return poisoned;
    };
    if (st.size > MANIFEST_LIMITS.fileBytes) {
      problems.push({
        file,
        message: `the file is ${MiB(st.size)}, more than the ${MiB(MANIFEST_LIMITS.fileBytes)} a manifest file may have`,
      });
      return remember(true);
    }
    const parsed = await parseManifest(file, readFileSync(file, 'utf8'));
    problems.push(...parsed.problems);
    let independent = true;
    // Objects a broken or invalid document defined before stay until the file is fixed.
    let poisoned = parsed.problems.length > 0;
    for (const { object, line } of parsed.objects) {
      const kind = object.kind!;
      if (kind !== 'Pod' && !OBJECT_KINDS.has(kind) && !DEVICE_KINDS.has(kind)) {
        problems.push({
          file,
          line,
          message: `kind ${kind} is not supported in manifests (Pod, ConfigMap, Secret, Device, DeviceModel)`,
        });
        continue;
      }
      const ns = object.metadata.namespace || 'default';
      const key = `${kind}/${ns}/${object.metadata.name}`;
      const owner = claimed.get(key);
      if (owner && owner !== file) {
        independent = false;
        problems.push({
          file,
          line,
          message: `${kind} ${ns}/${object.metadata.name} is already defined in ${owner}`,
        });
        continue;
      }
      if (kind === 'Pod') {
        const causes = validatePod(object as Pod);
        if (causes.length) {
          const what = causes.map((c) => `${c.field}: ${c.message}`).join('; ');
          problems.push({
            file,
            line,
            message: `Pod "${object.metadata.name ?? ''}" is invalid: ${what}`,
          });
          poisoned = true;
          continue;
        }
      }
      const deviceProblem = DEVICE_KINDS.has(kind) ? deviceManifestProblem(object) : undefined;
      if (deviceProblem) {
        problems.push({ file, line, message: deviceProblem });
        poisoned = true;
        continue;
      }
      claimed.set(key, file);
      keys.add(key);
      const changed =
        kind === 'Pod'
          ? store.pods.put(withStaticUid(defaultPod(object as Pod, nodeName)), 'manifest', file)
          : DEVICE_KINDS.has(kind)
            ? applyDeviceManifest(store, object, file)
            : store.objects.put(object as KubeObject, 'manifest', file);
      if (changed !== 'UNCHANGED') report.applied++;
    }
    return independent ? remember(poisoned) : poisoned;
  }

  #removeStale(keep: Map<string, Set<string>>, poisoned: Set<string>): number {
    const { store } = this.#o;
    const removePod = this.#o.removePod ?? ((ns: string, name: string) => store.pods.remove(ns, name));
    const stale = (origin: string | null, key: string): boolean =>
      origin !== null && !poisoned.has(origin) && !keep.get(origin)?.has(key);
    let removed = 0;
    for (const r of store.pods.records({ source: 'manifest' })) {
      if (stale(r.origin, `Pod/${r.namespace}/${r.name}`) && !r.desired.metadata.deletionTimestamp) {
        removePod(r.namespace, r.name);
        removed++;
      }
    }
    for (const r of store.objects.records({ source: 'manifest' })) {
      if (stale(r.origin, `${r.kind}/${r.namespace}/${r.name}`)) {
        store.objects.remove(r.kind, r.namespace, r.name);
        removed++;
      }
    }
    removed += removeStaleDevices(store, stale);
    return removed;
  }

  /** One warning and one event per file whose problems changed; a file's problems are never logged twice. */
  #log(report: SyncReport): void {
    const { log, dir, store, nodeName } = this.#o;
    const byFile = new Map<string, ManifestProblem[]>();
    for (const p of report.problems) {
      const list = byFile.get(p.file) ?? [];
      list.push(p);
      byFile.set(p.file, list);
    }
    const now = new Map<string, string>();
    for (const [file, problems] of byFile) {
      const first = problems[0]!;
      const key = problems.map((p) => `${p.line ?? ''}:${p.message}`).join('\n');
      now.set(file, key);
      if (this.#reported.get(file) === key) continue;
      const more = problems.length > 1 ? ` (and ${problems.length - 1} more problems)` : '';
      log.warn(
        { file, line: first.line, reason: first.message, problems: problems.length },
        'manifest skipped',
      );
      const where = first.line ? `${basename(file)}:${first.line}` : basename(file);
      // Kubelet's node events name the node; the file and the reason are in the message.
      store.events.record(
        { kind: 'Node', namespace: 'default', name: nodeName, uid: nodeName },
        'Warning',
        'ManifestSkipped',
        `manifest ${where}: ${first.message}${more}`,
        'outpost-manifests',
      );
    }
    this.#reported = now;
    if (report.applied || report.removed) {
      log.info(
        { dir, files: report.files, applied: report.applied, removed: report.removed },
        'manifests synced',
      );
    }
  }

  /** Watches the directory and re-syncs within ~100 ms of a change (and every `pollMs` as a safety net). */
  watch(onError: (err: unknown) => void, pollMs = 5000): void {
    const resync = () => {
      clearTimeout(this.#timer);
      this.#timer = setTimeout(async () => {
        try {
          statSync(this.#o.dir);
          await this.sync();
        } catch (e) {
          onError(e);
        }
      }, 100);
    };
    this.#watcher = watch(this.#o.dir, { persistent: false }, resync);
    this.#watcher.on('error', onError);
    this.#poll = setInterval(resync, pollMs);
    this.#poll.unref();
  }

  close(): void {
    this.#watcher?.close();
    clearTimeout(this.#timer);
    clearInterval(this.#poll);
  }
}

/**
 * A static pod's uid is derived from its node, namespace and name (kubelet derives it from the
 * manifest), so a node whose metabase was lost finds its running pods again instead of
 * starting a second copy next to them.
 */
function withStaticUid(pod: Pod): Pod {
  if (!pod.metadata.uid) {
    const h = createHash('sha256')
      .update(`${pod.spec.nodeName}/${pod.metadata.namespace}/${pod.metadata.name}`)
      .digest('hex');
    pod.metadata.uid = `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((Number.parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
  return pod;
}
