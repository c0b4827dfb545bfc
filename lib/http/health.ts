import { lastRecovery } from '#db/recover.ts';
import { describeLink } from '#lib/cloud/link.ts';
import { describeNetwork } from '#lib/pods/runtime/network.ts';
import type { Store } from '#lib/store/index.ts';
import {
  formatDuration,
  type HealthzCheck,
  type HealthzKind,
  moduleChecks,
  renderHealthz,
} from '#lib/supervisor/healthz.ts';
import type { AppContext } from './env.ts';

/**
 * `/healthz`, `/livez`, `/readyz` in the Kubernetes healthz text format, from the module states.
 * With the cloud link, /readyz adds a `cloud-link` check that always passes (offline is a normal
 * state of an edge node; reads never wait for the cloud) and says in verbose output how the link is.
 */
export function healthAnswer(c: AppContext, kind: HealthzKind) {
  const verbose = c.req.query('verbose') !== undefined;
  const now = c.var.now();
  const checks = moduleChecks(kind, c.var.health(), now);
  const cloud = c.var.cloud;
  if (cloud && kind === 'readyz')
    checks.push({
      name: 'cloud-link',
      ok: true,
      note: describeLink(cloud.link.snapshot(), cloud.outboxStats(), now),
    });
  if (kind === 'readyz') {
    const metabase = checks.find((x) => x.name === 'metabase');
    const note = recoveryNote(c.var.store, now);
    if (metabase?.ok && note) metabase.note = note;
    checks.push(diskCheck(c.var.store, now));
    // Informational, like cloud-link: the API and host-network pods work without a pod network.
    const network = c.var.runtimeNetwork?.();
    if (network) checks.push({ name: 'runtime-network', ok: true, note: describeNetwork(network) });
  }
  const { status, body } = renderHealthz(kind, checks, verbose);
  c.header('Content-Type', 'text/plain; charset=utf-8');
  c.header('X-Content-Type-Options', 'nosniff');
  return c.body(body, status);
}

/** The last recovery of a damaged metabase file, in one line for `[+]metabase ok (...)`. */
function recoveryNote(store: Store, now: number): string | undefined {
  const r = store.metabase.recovery ?? lastRecovery(store.metabase.sqlite);
  if (!r) return undefined;
  const how = r.snapshot
    ? `restored the snapshot ${r.snapshot.path} of ${new Date(r.snapshot.takenAt).toISOString()}`
    : 'no snapshot, rebuilt from the manifests, the cloud and the runtime';
  return (
    `recovered from a damaged file ${formatDuration(now - r.at)} ago (${r.problems[0] ?? 'corrupt'}): ` +
    `moved to ${r.movedTo}, ${how}; not recovered: ${r.lost}`
  );
}

/** `disk`: fails while metabase writes fail for lack of space (DiskPressure); reads still work. */
function diskCheck(store: Store, now: number): HealthzCheck {
  const full = store.disk.full;
  if (!full) return { name: 'disk', ok: true };
  return {
    name: 'disk',
    ok: false,
    detail:
      `DiskPressure: metabase writes fail for lack of space for ${formatDuration(now - full.since)} ` +
      `(data directory ${store.disk.dataDir}, ${Math.max(0, full.free)} bytes free: ${full.error}); ` +
      'reads still work, writes resume by themselves once space is freed',
  };
}
