// Reconnect timing as pure math: 0.5 s doubling to at most 5 s, jittered so that a fleet cut off
// together does not come back in lockstep (issue 22: no reconnect storm). The cap includes the
// jitter, so a node is back within 5 s of the API server answering again.
import { backoffDelay } from '#lib/supervisor/backoff.ts';

export const RECONNECT = { initialMs: 500, factor: 2, maxMs: 5_000 } as const;

/**
 * Delay before reconnect attempt `attempt` (0-based): the curve's value scaled by a jitter factor
 * in [0.5, 1) from `random` (default Math.random), never below the initial 0.5 s.
 */
export function reconnectDelay(attempt: number, random: () => number = Math.random): number {
  const base = backoffDelay(attempt, RECONNECT);
  const r = Math.min(Math.max(random(), 0), 0.999_999);
  return Math.max(RECONNECT.initialMs, Math.round(base * (0.5 + r / 2)));
}
