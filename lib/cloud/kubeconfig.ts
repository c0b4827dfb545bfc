// Outpost's own kubeconfig reader for the cloud link and `outpost join`: one context (the current
// one or a named one), its cluster and its user, read with kubectl's rules (client-go clientcmd):
// file paths relative to the kubeconfig's own directory, `*-data` fields base64, data and file of
// the same thing refused together. What Outpost cannot honour (credential plugins, auth providers,
// proxies, group impersonation) is refused by name rather than ignored. One file, no KUBECONFIG
// list: `--cloud` and `--bootstrap-kubeconfig` name the file.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse } from 'yaml';

/** A wrong or unusable kubeconfig; the message names the file and the entry. */
export class KubeconfigError extends Error {
  override name = 'KubeconfigError';
}

export interface KubeconfigCluster {
  name: string;
  /** The API server's URL, without a trailing slash. */
  server: string;
  /** certificate-authority-data, decoded (PEM). */
  caData?: Buffer | undefined;
  /** certificate-authority as an absolute path. */
  caFile?: string | undefined;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string | undefined;
}

export interface KubeconfigUser {
  name: string;
  token?: string | undefined;
  /** tokenFile as an absolute path, read when credentials are taken (token wins when both are set). */
  tokenFile?: string | undefined;
  certData?: Buffer | undefined;
  certFile?: string | undefined;
  keyData?: Buffer | undefined;
  keyFile?: string | undefined;
  username?: string | undefined;
  password?: string | undefined;
  /** `as`: sent as Impersonate-User. */
  impersonate?: string | undefined;
}

/** The chosen context of a kubeconfig, resolved. */
export interface Kubeconfig {
  /** The file it came from (for messages), or a description of an in-memory one. */
  source: string;
  context: string;
  namespace?: string | undefined;
  cluster: KubeconfigCluster;
  /** Absent when the context names no user (anonymous). */
  user?: KubeconfigUser | undefined;
}

/** What a connection needs: TLS options and request headers, files read now. */
export interface KubeconfigCredentials {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  rejectUnauthorized?: false;
  servername?: string;
  headers: Record<string, string>;
}

type Map = Record<string, unknown>;
const isMap = (v: unknown): v is Map => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads `file` and resolves its current context, or `opts.context` when given. */
export function readKubeconfig(file: string, opts: { context?: string | undefined } = {}): Kubeconfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new KubeconfigError(`kubeconfig ${file}: ${(e as Error).message}`);
  }
  return parseKubeconfig(text, { source: file, dir: dirname(resolve(file)), context: opts.context });
}

/** Resolves a kubeconfig's text; relative paths are taken from `dir`. */
export function parseKubeconfig(
  text: string,
  o: { source: string; dir: string; context?: string | undefined },
): Kubeconfig {
  const fail = (msg: string): never => {
    throw new KubeconfigError(`kubeconfig ${o.source}: ${msg}`);
  };
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    return fail(`not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  doc ??= {};
  if (!isMap(doc)) return fail('not a kubeconfig (expected a mapping with clusters, users and contexts)');
  const cfg = doc;

  const named = (list: string, name: string, what: string, of: string): Map => {
    const entries = cfg[list] ?? [];
    if (!Array.isArray(entries)) return fail(`${list} must be a list`);
    const found = entries.find((e) => isMap(e) && e.name === name) as Map | undefined;
    if (!found) {
      const names = entries.filter(isMap).map((e) => JSON.stringify(e.name));
      return fail(
        `${what} "${name}"${of} not found (${names.length ? `${list}: ${names.join(', ')}` : `no ${list}`})`,
      );
    }
    const body = found[what];
    if (body === undefined || body === null) return {};
    if (!isMap(body)) return fail(`${what} "${name}": expected a mapping`);
    return body;
  };
  const read = (where: string, body: Map) => ({
    str(key: string): string | undefined {
      const v = body[key];
      if (v === undefined || v === null || v === '') return undefined;
      if (typeof v !== 'string') return fail(`${where}: ${key} must be a string`);
      return v;
    },
    bool(key: string): boolean {
      const v = body[key] ?? false;
      if (typeof v !== 'boolean') return fail(`${where}: ${key} must be true or false`);
      return v;
    },
    path(key: string): string | undefined {
      const v = this.str(key);
      return v === undefined || isAbsolute(v) ? v : resolve(o.dir, v);
    },
    data(key: string): Buffer | undefined {
      const v = this.str(key);
      if (v === undefined) return undefined;
      const b = v.replace(/\s+/g, '');
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b) || b.length % 4 === 1)
        return fail(`${where}: ${key} is not base64`);
      return Buffer.from(b, 'base64');
    },
    refuse(key: string, why: string) {
      if (body[key] !== undefined && body[key] !== null)
        fail(`${where}: ${key} is not supported by Outpost (${why})`);
    },
    oneOf(data: string, file: string) {
      if (this.str(data) !== undefined && this.str(file) !== undefined)
        fail(`${where}: both ${data} and ${file} are set; keep one (kubectl refuses both too)`);
    },
  });

  const context = o.context ?? (typeof cfg['current-context'] === 'string' ? cfg['current-context'] : '');
  if (!context) return fail('no current-context is set and no context was named');
  const ctx = read(`context "${context}"`, named('contexts', context, 'context', ''));
  const clusterName = ctx.str('cluster');
  if (!clusterName) return fail(`context "${context}" names no cluster`);
  const userName = ctx.str('user');
  const of = ` (of context "${context}")`;

  const cb = named('clusters', clusterName, 'cluster', of);
  const c = read(`cluster "${clusterName}"`, cb);
  const server = c.str('server');
  if (!server) return fail(`cluster "${clusterName}" has no server`);
  if (!URL.canParse(server) || !/^https?:$/.test(new URL(server).protocol))
    return fail(
      `cluster "${clusterName}": server ${JSON.stringify(server)} is not an http:// or https:// URL`,
    );
  c.refuse('proxy-url', 'the cloud link connects to the server directly');
  c.oneOf('certificate-authority-data', 'certificate-authority');
  const cluster: KubeconfigCluster = {
    name: clusterName,
    server: server.replace(/\/+$/, ''),
    caData: c.data('certificate-authority-data'),
    caFile: c.path('certificate-authority'),
    insecureSkipTlsVerify: c.bool('insecure-skip-tls-verify'),
    tlsServerName: c.str('tls-server-name'),
  };
  if (cluster.insecureSkipTlsVerify && (cluster.caData || cluster.caFile))
    fail(
      `cluster "${clusterName}": a certificate authority and insecure-skip-tls-verify are both set (kubectl refuses both too)`,
    );

  let user: KubeconfigUser | undefined;
  if (userName) {
    const u = read(`user "${userName}"`, named('users', userName, 'user', of));
    const plugins = 'use a client certificate, token or tokenFile';
    u.refuse('exec', `credential plugins are not run; ${plugins}`);
    u.refuse('auth-provider', `auth providers are not run; ${plugins}`);
    for (const k of ['as-groups', 'as-uid', 'as-user-extra']) u.refuse(k, 'only `as` (Impersonate-User) is');
    u.oneOf('client-certificate-data', 'client-certificate');
    u.oneOf('client-key-data', 'client-key');
    user = {
      name: userName,
      token: u.str('token'),
      // `tokenFile` is kubectl's key; `token-file` is how @kubernetes/client-node spelt it.
      tokenFile: u.path('tokenFile') ?? u.path('token-file'),
      certData: u.data('client-certificate-data'),
      certFile: u.path('client-certificate'),
      keyData: u.data('client-key-data'),
      keyFile: u.path('client-key'),
      username: u.str('username'),
      password: u.str('password'),
      impersonate: u.str('as'),
    };
    const hasCert = !!(user.certData || user.certFile);
    const hasKey = !!(user.keyData || user.keyFile);
    if (hasCert !== hasKey)
      fail(
        `user "${userName}": ${hasCert ? 'a client certificate without a client key' : 'a client key without a client certificate'}`,
      );
    if ((user.token || user.tokenFile) && user.username)
      fail(`user "${userName}": a token and a username are both set; keep one (kubectl refuses both too)`);
  }
  return { source: o.source, context, namespace: ctx.str('namespace'), cluster, user };
}

const readField = (kc: Kubeconfig, where: string, field: string, path: string): Buffer => {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new KubeconfigError(`kubeconfig ${kc.source}: ${where}: ${field} ${(e as Error).message}`);
  }
};

/** The cluster's CA (PEM), inline or read from its file; undefined when the kubeconfig has none. */
export function clusterCa(kc: Kubeconfig): Buffer | undefined {
  const c = kc.cluster;
  return (
    c.caData ??
    (c.caFile ? readField(kc, `cluster "${c.name}"`, 'certificate-authority', c.caFile) : undefined)
  );
}

/** TLS options and headers for the context, reading the files it names now (after a rotation too). */
export function kubeconfigCredentials(kc: Kubeconfig): KubeconfigCredentials {
  const out: KubeconfigCredentials = { headers: {} };
  const ca = clusterCa(kc);
  if (ca) out.ca = ca;
  if (kc.cluster.insecureSkipTlsVerify) out.rejectUnauthorized = false;
  if (kc.cluster.tlsServerName) out.servername = kc.cluster.tlsServerName;
  const u = kc.user;
  if (!u) return out;
  const where = `user "${u.name}"`;
  const cert =
    u.certData ?? (u.certFile ? readField(kc, where, 'client-certificate', u.certFile) : undefined);
  const key = u.keyData ?? (u.keyFile ? readField(kc, where, 'client-key', u.keyFile) : undefined);
  if (cert) out.cert = cert;
  if (key) out.key = key;
  let token = u.token;
  if (!token && u.tokenFile) {
    token = readField(kc, where, 'tokenFile', u.tokenFile).toString('utf8').trim();
    if (!token)
      throw new KubeconfigError(`kubeconfig ${kc.source}: ${where}: tokenFile ${u.tokenFile} is empty`);
  }
  if (token) out.headers.authorization = `Bearer ${token}`;
  else if (u.username)
    out.headers.authorization = `Basic ${Buffer.from(`${u.username}:${u.password ?? ''}`).toString('base64')}`;
  if (u.impersonate) out.headers['impersonate-user'] = u.impersonate;
  return out;
}
