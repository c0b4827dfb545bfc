// Which JavaScript runtime runs Outpost: the one fact that picks the SQLite driver and the HTTP
// server adapter at start (everything else is the same code on all three).

export type RuntimeName = 'node' | 'deno' | 'bun';

const g = globalThis as { Bun?: { version: string }; Deno?: { version: { deno: string } } };

/** `bun` or `deno` when their global is there, else `node`. */
export const runtime: RuntimeName = g.Bun ? 'bun' : g.Deno ? 'deno' : 'node';

/** The runtime and its version, as `node 20.18.0`, `deno 2.9.6`, `bun 1.4.5`. */
export const runtimeVersion = (): string =>
  g.Bun ? `bun ${g.Bun.version}` : g.Deno ? `deno ${g.Deno.version.deno}` : `node ${process.versions.node}`;
