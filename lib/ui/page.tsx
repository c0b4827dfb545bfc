// The dashboard page and the token login page: one HTML document each, styles inline, one small
// script (/ui/app.js) from the same origin. Nothing from a CDN: it works on a LAN without internet.
import type { Child } from 'hono/jsx';
import { allows } from '#lib/auth/roles.ts';
import type { AppContext } from '#lib/http/env.ts';
import { OUTPOST_VERSION } from '#lib/version.ts';
import { Audit, Devices, Events, Pods, Summary } from './parts.tsx';

const STYLE = `
:root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1d2330;--card:#fff;--line:#d9dde4;--muted:#6b7385;--ok:#17803d;--bad:#c0262d;--warn:#a35c00;--accent:#2459c4}
@media (prefers-color-scheme:dark){:root{--bg:#14171c;--fg:#e3e6eb;--card:#1d2128;--line:#333945;--muted:#98a0b0;--ok:#4cc37a;--bad:#ff6b70;--warn:#f0a040;--accent:#7aa5ff}}
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg)}
header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;padding:.7rem 1rem;background:var(--card);border-bottom:1px solid var(--line);position:sticky;top:0;z-index:2}
header h1{font-size:1.1rem;margin:0}header nav{display:flex;gap:.8rem;flex-wrap:wrap}header a{color:var(--accent);text-decoration:none}
header .who{margin-left:auto;color:var(--muted);font-size:.9rem}
main{max-width:1100px;margin:0 auto;padding:.5rem .8rem 3rem}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.6rem .9rem;margin:.9rem 0;overflow-x:auto}
h2{font-size:1.05rem;margin:.2rem 0 .5rem}h3{font-size:1rem;margin:.6rem 0 .3rem}
table.grid{border-collapse:collapse;width:100%;font-size:.92rem}
.grid th,.grid td{text-align:left;padding:.3rem .45rem;border-bottom:1px solid var(--line);vertical-align:middle}
.grid th{color:var(--muted);font-weight:600}
.muted{color:var(--muted);font-size:.88em;font-weight:normal}.ok{color:var(--ok)}.bad{color:var(--bad)}.warn{color:var(--warn)}
button{font:inherit;padding:.25rem .7rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);cursor:pointer;min-height:2rem}
button:hover{border-color:var(--accent)}.actions{white-space:nowrap;display:flex;gap:.35rem}
input,select{font:inherit;padding:.2rem .4rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);min-height:2rem}
form.desired{display:flex;gap:.35rem;align-items:center;flex-wrap:wrap}form.desired output{font-size:.85rem}
form.desired output.bad{color:var(--bad)}form.desired output.ok{color:var(--ok)}
#logs{position:fixed;inset:auto 0 0 0;max-height:60vh;display:flex;flex-direction:column;background:var(--card);border-top:2px solid var(--accent);z-index:3}
#logs[hidden]{display:none}#logs .bar{display:flex;gap:.5rem;align-items:center;padding:.4rem .8rem;flex-wrap:wrap}
#logs pre{margin:0;padding:.5rem .8rem;overflow:auto;flex:1;font:12.5px/1.4 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-all}
#toast{position:fixed;right:1rem;top:4rem;background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.5rem .8rem;z-index:4}
#toast[hidden]{display:none}.path{word-break:break-all}
.live{display:inline-block;width:.6rem;height:.6rem;border-radius:50%;background:var(--muted);margin-right:.3rem}.live.on{background:var(--ok)}
@media (max-width:640px){body{font-size:14px}.grid td.path,.grid td.msg{min-width:15rem;word-break:normal}.grid th,.grid td{padding:.25rem .3rem}header .who{margin-left:0;width:100%}}
`;

function Layout({ title, children }: { title: string; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{title}</title>
        <style>{STYLE}</style>
      </head>
      <body>{children}</body>
    </html>
  );
}

/** The whole dashboard as the caller's role may see it. */
export function dashboard(c: AppContext) {
  const v = c.var;
  const now = v.now();
  const who = v.principal ?? { user: 'system:anonymous', role: 'admin' as const, via: 'anonymous' as const };
  const admin = allows(who.role, 'admin');
  return (
    <Layout title={`Outpost ${v.nodeName}`}>
      <header>
        <h1>
          <span class="live" id="live" title="live updates" />
          Outpost · {v.nodeName}
        </h1>
        <nav>
          <a href="#pods">Pods</a>
          <a href="#devices">Devices</a>
          <a href="#events">Events</a>
          {admin ? <a href="#audit">Audit</a> : null}
        </nav>
        <span class="who">
          {who.user} ({who.role})
          {who.via === 'token' ? (
            <form method="post" action="/ui/logout" style="display:inline;margin-left:.5rem">
              <button type="submit">Sign out</button>
            </form>
          ) : null}
          {/* Without credentials the page only reads: logs, restarts and edits need a sign-in. */}
          {who.via === 'anonymous' && !admin ? (
            <a href="/ui/login" style="margin-left:.5rem">
              Sign in
            </a>
          ) : null}
        </span>
      </header>
      <main data-role={who.role}>
        {part(c, 'summary', now)}
        {part(c, 'pods', now)}
        {part(c, 'devices', now)}
        {part(c, 'events', now)}
        {admin ? part(c, 'audit', now) : null}
      </main>
      <div id="logs" hidden>
        <div class="bar">
          <strong id="logs-title" />
          <select id="logs-container" aria-label="container" />
          <label>
            <input type="checkbox" id="logs-follow" checked /> follow
          </label>
          <button type="button" id="logs-close">
            Close
          </button>
        </div>
        <pre id="logs-text" />
      </div>
      <div id="toast" hidden role="status" />
      <script src="/ui/app.js" defer />
    </Layout>
  );
}

export const PARTS = ['summary', 'pods', 'devices', 'events', 'audit'] as const;
export type PartName = (typeof PARTS)[number];

/** One section, rendered from the metabase and the module health as they are now. */
export function part(c: AppContext, name: PartName, now = c.var.now()) {
  const v = c.var;
  const role = v.principal?.role ?? 'admin';
  switch (name) {
    case 'summary': {
      const mqtt = v.mqtt?.();
      const link = v.cloud?.link.snapshot();
      return (
        <Summary
          v={{
            node: v.nodeName,
            version: OUTPOST_VERSION,
            now,
            modules: v.health(),
            runtime: v.cri?.endpoint,
            mqtt,
            cloud: v.cloud && link ? { server: v.cloud.server, ...link } : undefined,
          }}
        />
      );
    }
    case 'pods':
      return <Pods pods={v.store.pods.list().items} now={now} role={role} />;
    case 'devices':
      return (
        <Devices
          devices={v.store.devices.list().items}
          models={v.store.deviceModels.list().items}
          now={now}
          role={role}
        />
      );
    case 'events': {
      const items = v.store.events.list().items as Parameters<typeof Events>[0]['events'];
      const when = (e: (typeof items)[number]) => Date.parse(e.lastTimestamp ?? e.eventTime ?? '') || 0;
      return <Events events={[...items].sort((a, b) => when(b) - when(a)).slice(0, 30)} now={now} />;
    }
    case 'audit':
      return <Audit records={v.store.audit.list({ limit: 50 })} />;
  }
}

/** The token form shown when tokens are configured and the browser has none. */
export function loginPage(error?: string) {
  return (
    <Layout title="Outpost · sign in">
      <main style="max-width:420px">
        <section>
          <h2>Sign in to Outpost</h2>
          <p class="muted">
            Paste a token made with <code>outpost token create</code>, or the node's admin token (the{' '}
            <code>token:</code> line of <code>DATA_DIR/auth/admin.kubeconfig</code>). It is kept in a cookie
            for this site only.
          </p>
          <form method="post" action="/ui/login" style="display:flex;flex-direction:column;gap:.6rem">
            <input
              type="password"
              name="token"
              aria-label="token"
              placeholder="opt_…"
              autocomplete="current-password"
              required
            />
            <button type="submit">Sign in</button>
          </form>
          {error ? (
            <p class="bad" role="alert">
              {error}
            </p>
          ) : null}
        </section>
      </main>
    </Layout>
  );
}
