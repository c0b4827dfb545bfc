// Finding the container runtime when it appears: while none answers, the configured socket (and,
// on the default endpoint, the other usual places of a CRI socket, the lab's included) is checked
// every second; the first that answers CRI's Version is the one Outpost connects to.
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Clock, Timer } from '#lib/clock.ts';

export const DEFAULT_RUNTIME_ENDPOINT = 'unix:///run/containerd/containerd.sock';

/** Where a CRI socket usually is: containerd, CRI-O, k3s's containerd. */
const USUAL = [
  'unix:///run/containerd/containerd.sock',
  'unix:///var/run/containerd/containerd.sock',
  'unix:///run/crio/crio.sock',
  'unix:///var/run/crio/crio.sock',
  'unix:///run/k3s/containerd/containerd.sock',
];

/**
 * The endpoints watched for a runtime: the configured one first; with the default endpoint also
 * the usual sockets and the containerd lab's (`$OUTPOST_LAB_DIR`, else `.lab/lab` of the working
 * directory and of the checkout the running entry file is in).
 */
export function runtimeCandidates(
  endpoint: string,
  env: NodeJS.ProcessEnv = process.env,
  entry = process.argv[1],
): string[] {
  if (endpoint !== DEFAULT_RUNTIME_ENDPOINT) return [endpoint];
  const labs = [
    env.OUTPOST_LAB_DIR,
    resolve('.lab/lab'),
    // dist/outpost.cjs or dist/outpost.mjs, or bin/outpost.ts from source: the checkout is one folder up.
    entry ? resolve(dirname(entry), '..', '.lab/lab') : undefined,
  ].filter((d): d is string => Boolean(d));
  const all = [endpoint, ...USUAL, ...labs.map((d) => `unix://${resolve(d, 'containerd.sock')}`)];
  return [...new Set(all)];
}

export interface RuntimeFinderOptions {
  candidates: string[];
  /** Whether a runtime answers CRI at this endpoint (Version within a short deadline). */
  answers(endpoint: string): Promise<boolean>;
  /** Called with the first endpoint that answers. */
  found(endpoint: string): void;
  clock: Clock;
  /** Default 1 s. */
  intervalMs?: number;
}

/** Whether a `unix://` endpoint's socket file exists (any other endpoint: true, it may answer). */
export const socketExists = (endpoint: string): boolean =>
  !endpoint.startsWith('unix://') || existsSync(endpoint.slice('unix://'.length));

/** Polls the candidates while started; stops itself after `found`. */
export class RuntimeFinder {
  readonly #o: RuntimeFinderOptions;
  #timer: Timer | undefined;
  #running = false;
  #busy = false;
  #closed = false;

  constructor(o: RuntimeFinderOptions) {
    this.#o = o;
  }

  /** Starts watching (no-op when already watching, or closed). */
  start(): void {
    if (this.#running || this.#closed) return;
    this.#running = true;
    this.#schedule(0);
  }

  stop(): void {
    this.#running = false;
    if (this.#timer) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Stops for good: the runtime module, failing to connect as the agent stops, calls start() again,
   * and a finder started then would poll on after the agent closed (its timer alone kept a process
   * alive that had nothing else left).
   */
  close(): void {
    this.#closed = true;
    this.stop();
  }

  #schedule(ms: number): void {
    this.#timer = this.#o.clock.setTimeout(() => void this.#tick(), ms);
  }

  /** One round: the existing sockets in order; the first that answers wins. */
  async #tick(): Promise<void> {
    this.#timer = undefined;
    if (!this.#running || this.#busy) return;
    this.#busy = true;
    try {
      for (const endpoint of this.#o.candidates) {
        if (!this.#running) return;
        if (!socketExists(endpoint)) continue;
        if (await this.#o.answers(endpoint).catch(() => false)) {
          if (!this.#running) return;
          this.stop();
          this.#o.found(endpoint);
          return;
        }
      }
    } finally {
      this.#busy = false;
    }
    if (this.#running) this.#schedule(this.#o.intervalMs ?? 1_000);
  }
}
