// Shared set-up of the end-to-end suites: the containerd lab, or a skip (a failure under CI=true).
import { rmSync } from 'node:fs';
import { test } from 'uvu';
import type { CriClient } from '#lib/cri/client.ts';
import { type Lab, type LabOptions, startLab } from '../../scripts/lab.ts';

export const ci = Boolean(process.env.CI) && process.env.CI !== 'false';

/** Starts (or reuses) the lab; without one, registers a skipped test (or a failing one under CI). */
export async function labOrSkip(file: string, opts: LabOptions = {}): Promise<Lab | undefined> {
  const lab = await startLab({ log: () => {}, ...opts }).catch((e: Error) => e);
  if (!(lab instanceof Error)) return lab;
  if (ci) {
    test('the containerd lab starts', () => {
      throw lab;
    });
  } else {
    process.stderr.write(`skipping ${file}: the containerd lab did not start: ${lab.message}\n`);
    test.skip(`${file} (no containerd lab)`, () => {});
  }
  return undefined;
}

/**
 * Polls `fn` until it returns a truthy value or the time is up (then returns the last value). The
 * default deadline is generous (90 s): it is only reached on failure, and a pod starting or a
 * device reaching its mapper can take tens of seconds on a shared machine at load 20.
 */
export async function waitFor<T>(fn: () => T | Promise<T>, timeoutMs = 90_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await fn();
  while (!last && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, everyMs));
    last = await fn();
  }
  return last;
}

/** Removes every pod sandbox a suite left in namespace `ns` of the lab's runtime (its clean-up). */
export async function removeSandboxes(cri: CriClient, ns: string): Promise<void> {
  const labelSelector = { 'io.kubernetes.pod.namespace': ns };
  for (const s of await cri.listPodSandbox({ labelSelector }).catch(() => [])) {
    await cri.stopPodSandbox(s.id).catch(() => {});
    await cri.removePodSandbox(s.id).catch(() => {});
  }
}

/**
 * A lab suite's usual end: stops its agent, removes the sandboxes of its namespace, closes its
 * CRI client, removes its directory and stops the lab.
 */
export async function endLabSuite(s: {
  agent: { stop(): Promise<void> };
  cri: CriClient;
  ns: string;
  dir: string;
  lab: Lab;
}): Promise<void> {
  await s.agent.stop();
  await removeSandboxes(s.cri, s.ns);
  s.cri.close();
  rmSync(s.dir, { recursive: true, force: true });
  await s.lab.stop();
}
