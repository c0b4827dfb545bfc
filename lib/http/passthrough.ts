// Reads the metabase does not serve (nodes, services, deployments, ...) go to the API server with
// the node's own credentials while the cloud link is online, and get a clear 503 Status while it
// is offline. Discovery (/api/v1, /apis) shows the cloud's resources beside the local ones while
// online, so kubectl finds them; what the metabase serves always answers locally.
import { Readable } from 'node:stream';
import type { MiddlewareHandler } from 'hono';
import { unavailable } from '#lib/kube/status.ts';
import type { AppContext, AppEnv } from './env.ts';

const API = /^\/apis?(\/|$)/;

/** The pass-through answer for an unmatched read under /api or /apis; undefined when not one. */
export async function passThrough(c: AppContext): Promise<Response | undefined> {
  const cloud = c.var.cloud;
  const url = new URL(c.req.url);
  if (!cloud || (c.req.method !== 'GET' && c.req.method !== 'HEAD') || !API.test(url.pathname))
    return undefined;
  if (!cloud.link.online)
    throw unavailable(
      `the cloud link is offline: ${url.pathname} is served by the API server; offline, this node answers only for what it holds (pods, events, configmaps, secrets, devices)`,
    );
  const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
  let res: Awaited<ReturnType<typeof cloud.raw>>;
  try {
    res = await cloud.raw(url.pathname + url.search, {
      accept: c.req.header('accept') ?? 'application/json',
      timeoutMs: 30_000,
      signal: c.req.raw.signal,
    });
  } catch (e) {
    throw unavailable(`the cloud link failed: ${(e as Error).message}`);
  }
  const headers = { 'content-type': String(res.headers['content-type'] ?? 'application/json') };
  if (watch)
    return new Response(Readable.toWeb(res.body) as ReadableStream, { status: res.statusCode, headers });
  const text = await res.body.text().catch((e: Error) => {
    throw unavailable(`the cloud link failed: ${e.message}`);
  });
  return new Response(c.req.method === 'HEAD' ? null : text, { status: res.statusCode, headers });
}

interface Discovery {
  resources?: { name: string }[];
  groups?: { name: string }[];
}

/** Adds the cloud's core resources (/api/v1) and API groups (/apis) to the local discovery while online. */
export function mergeCloudDiscovery(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const cloud = c.var.cloud;
    const path = c.req.path;
    if (!cloud?.link.online || c.req.method !== 'GET' || (path !== '/api/v1' && path !== '/apis')) return;
    if (c.res.status !== 200) return;
    const remote = await cloud.request<Discovery>(path, { timeoutMs: 5_000 }).catch(() => undefined); // offline now: the local discovery alone
    if (!remote) return;
    const local = (await c.res.clone().json()) as Discovery;
    const key = path === '/api/v1' ? 'resources' : 'groups';
    const have = new Set((local[key] ?? []).map((r) => r.name));
    const merged = {
      ...local,
      [key]: [...(local[key] ?? []), ...(remote[key] ?? []).filter((r) => !have.has(r.name))],
    };
    c.res = new Response(JSON.stringify(merged), { status: 200, headers: c.res.headers });
  };
}
