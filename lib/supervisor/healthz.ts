// /healthz, /livez and /readyz bodies in kube-apiserver's format (k8s.io/apiserver healthz.go):
// plain success is `ok`; any failure lists every check, `[-]name failed: reason withheld`, then
// `<kind> check failed` with 500. Unlike the apiserver, `?verbose` shows the failure detail: the
// endpoint is the node's own and the detail (backoff state, last error) is what an operator needs.
import type { ModuleSnapshot } from './modules.ts';

export type HealthzKind = 'healthz' | 'readyz' | 'livez';

export interface HealthzCheck {
  name: string;
  ok: boolean;
  detail?: string;
  /** Shown after `ok` in verbose output (a passing check with state worth seeing, e.g. the cloud link). */
  note?: string;
}

export interface HealthzResponse {
  status: 200 | 500;
  body: string;
}

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** Renders checks the way the apiserver answers `/<kind>` and `/<kind>?verbose`. */
export function renderHealthz(kind: HealthzKind, checks: HealthzCheck[], verbose: boolean): HealthzResponse {
  const failed = checks.some((c) => !c.ok);
  if (!failed && !verbose) return { status: 200, body: 'ok' };
  let body = '';
  for (const c of checks) {
    if (c.ok) body += `[+]${c.name} ok${verbose && c.note ? ` (${oneLine(c.note)})` : ''}\n`;
    else body += `[-]${c.name} failed: ${verbose ? oneLine(c.detail || 'unknown') : 'reason withheld'}\n`;
  }
  return failed
    ? { status: 500, body: `${body}${kind} check failed\n` }
    : { status: 200, body: `${body}${kind} check passed\n` };
}

/** Go-style short duration: 850ms, 12s, 2m5s, 1h3m. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60) ? `${Math.floor((s % 3600) / 60)}m` : ''}`;
}

/** One line on why a module is not ok: state, restarts, last error and when, next retry. */
export function describeModule(m: ModuleSnapshot, now: number): string {
  const parts = [m.state, `restarts ${m.restarts}`];
  if (m.lastError !== undefined) {
    const ago = m.lastErrorAt === undefined ? '' : ` (${formatDuration(now - m.lastErrorAt)} ago)`;
    parts.push(`last error: ${m.lastError}${ago}`);
  }
  if (m.nextRetryAt !== undefined) parts.push(`next retry in ${formatDuration(m.nextRetryAt - now)}`);
  return parts.join(', ');
}

/** Which modules an endpoint checks. Default: readyz all modules, livez and healthz critical ones. */
export type HealthzSelection = Partial<Record<HealthzKind, (m: ModuleSnapshot) => boolean>>;

const defaultSelection: Record<HealthzKind, (m: ModuleSnapshot) => boolean> = {
  readyz: () => true,
  livez: (m) => m.critical,
  healthz: (m) => m.critical,
};

/**
 * Turns a supervisor snapshot into checks. Ready means running. Live means anything but `failed`:
 * a module in backoff is being handled and a degraded one was given up on by choice, so neither
 * is a reason to restart the whole process.
 */
export function moduleChecks(
  kind: HealthzKind,
  snapshot: readonly ModuleSnapshot[],
  now: number,
  selection: HealthzSelection = {},
): HealthzCheck[] {
  const counts = selection[kind] ?? defaultSelection[kind];
  return snapshot.filter(counts).map((m) => {
    const ok = kind === 'readyz' ? m.state === 'running' : m.state !== 'failed';
    return ok ? { name: m.name, ok } : { name: m.name, ok, detail: describeModule(m, now) };
  });
}

/** renderHealthz over a supervisor snapshot. */
export function renderModuleHealthz(
  kind: HealthzKind,
  snapshot: readonly ModuleSnapshot[],
  opts: { verbose: boolean; now: number; selection?: HealthzSelection },
): HealthzResponse {
  return renderHealthz(kind, moduleChecks(kind, snapshot, opts.now, opts.selection), opts.verbose);
}
