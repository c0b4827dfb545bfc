// A container's log as `kubectl logs` reads it, shared by the local API's `.../pods/{name}/log`
// and the node API's `/containerLogs/{ns}/{pod}/{container}` (the API server's proxy target).
import { stream } from 'hono/streaming';
import * as z from 'zod';
import { unavailable } from '#lib/kube/status.ts';
import type { Pod } from '#lib/kube/types.ts';
import { parseRfc3339 } from '#lib/pods/logs/format.ts';
import { locateLog, stillRunning } from '#lib/pods/logs/locate.ts';
import { writeContainerLog } from '#lib/pods/logs/read.ts';
import type { AppContext } from './env.ts';

// The API server reads a bool parameter as true unless it is `0` or `false` (`?follow` alone is true).
const flag = z
  .string()
  .optional()
  .transform((v) => v !== undefined && v !== '0' && v.toLowerCase() !== 'false');
const int = (min: number, message: string) =>
  z
    .string()
    .regex(/^[+-]?\d{1,15}$/, 'must be an integer')
    .transform(Number)
    .pipe(z.number().min(min, message))
    .optional();

/** core/v1 PodLogOptions as query parameters, with the API server's validation messages. */
export const logQuery = z
  .object({
    container: z.string().optional(),
    follow: flag,
    previous: flag,
    timestamps: flag,
    tailLines: int(0, 'must be greater than or equal to 0'),
    sinceSeconds: int(1, 'must be greater than 0'),
    sinceTime: z
      .string()
      .transform((v, ctx) => {
        const ns = parseRfc3339(v);
        if (ns === undefined)
          ctx.addIssue({ code: 'custom', message: 'must be an RFC 3339 time, e.g. 2006-01-02T15:04:05Z' });
        return ns ?? 0n;
      })
      .optional(),
    limitBytes: int(1, 'must be greater than 0'),
    stream: z.enum(['All', 'Stdout', 'Stderr']).optional(),
  })
  .refine((q) => q.sinceSeconds === undefined || q.sinceTime === undefined, {
    message: 'at most one of `sinceTime` or `sinceSeconds` may be specified',
    path: ['sinceSeconds'],
  });

export type LogQuery = z.output<typeof logQuery>;

/**
 * `200 text/plain`, the raw bytes; with `follow` the response stays open, flushed as lines
 * arrive, until the container ends or the client leaves.
 */
export async function serveContainerLog(c: AppContext, pod: Pod, container: string, q: LogQuery) {
  const name = pod.metadata.name;
  const { cri, shutdown, log } = c.var;
  if (!cri) throw unavailable('no container runtime is configured on this node');
  const source = await locateLog(cri, pod, container, q.previous, shutdown);
  const sinceNs =
    q.sinceTime ??
    (q.sinceSeconds === undefined ? undefined : BigInt(c.var.now() - q.sinceSeconds * 1000) * 1_000_000n);
  const opts = {
    stream: q.stream === 'Stdout' ? 'stdout' : q.stream === 'Stderr' ? 'stderr' : undefined,
    tailLines: q.tailLines,
    sinceNs,
    timestamps: q.timestamps,
    limitBytes: q.limitBytes,
  } as const;
  c.header('Content-Type', 'text/plain');
  if (!source.path) return c.body(null, 200);
  const leave = q.follow ? c.var.limits.logs.enter() : () => {};
  return stream(
    c,
    async (s) => {
      s.onAbort(leave);
      const left = new AbortController();
      s.onAbort(() => left.abort());
      const follow =
        q.follow && source.running
          ? {
              running: () => stillRunning(cri, source.containerId),
              signal: AbortSignal.any([left.signal, shutdown, c.req.raw.signal]),
            }
          : undefined;
      try {
        await writeContainerLog(source.path, opts, (chunk) => s.write(chunk).then(() => {}), follow);
      } finally {
        leave();
      }
    },
    async (err) =>
      log.warn({ err, pod: `${pod.metadata.namespace}/${name}`, container }, 'log stream failed'),
  );
}
