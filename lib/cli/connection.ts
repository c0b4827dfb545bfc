import { accessSync, constants, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { runtime } from '#lib/runtime.ts';
import { CliError, type ConnectionTls, usageError } from './client.ts';

/** Where and how the CLI reaches Outpost: flags first, then a kubeconfig's current context. */
export interface Connection {
  server: string;
  token?: string | undefined;
  tls?: ConnectionTls | undefined;
  /**
   * With the data directory's admin credential: the agent's root-only unix socket in the same
   * data directory, which the client tries first (no TCP, no TLS handshake; the token goes along,
   * so the caller is the same admin) and falls back from to `server` when nothing listens on it.
   */
  socketPath?: string | undefined;
}

export interface ConnectionFlags {
  server?: string | undefined;
  token?: string | undefined;
  kubeconfig?: string | undefined;
  certificateAuthority?: string | undefined;
  clientCertificate?: string | undefined;
  clientKey?: string | undefined;
}

const DEFAULT_SERVER = 'http://127.0.0.1:10550';

const file = (flag: string, path: string | undefined): Buffer | undefined => {
  if (!path) return undefined;
  try {
    return readFileSync(path);
  } catch (e) {
    throw new CliError(`error: ${flag} ${path}: ${(e as Error).message}`);
  }
};

const b64 = (v: unknown): Buffer | undefined =>
  typeof v === 'string' ? Buffer.from(v, 'base64') : undefined;

export interface Kubeconfig {
  apiVersion?: string;
  kind?: string;
  'current-context'?: string;
  contexts?: { name: string; context: { cluster: string; user: string } }[];
  clusters?: { name: string; cluster: Record<string, unknown> }[];
  users?: { name: string; user: Record<string, unknown> }[];
}

// The admin kubeconfig exactly as lib/auth/admin.ts writes it (test/cli/connection.test.ts holds
// the two together); anything else, edited or foreign, goes to the YAML parser.
const OUTPOST_KUBECONFIG =
  /^apiVersion: v1\nkind: Config\nclusters:\n {2}- name: outpost\n {4}cluster:\n {6}server: (\S+)(?:\n {6}certificate-authority-data: ([A-Za-z0-9+/=]+))?\nusers:\n {2}- name: admin\n {4}user:\n {6}token: ([\w.~-]+)\ncontexts:\n {2}- name: admin@outpost\n {4}context: \{cluster: outpost, user: admin\}\ncurrent-context: admin@outpost\n$/;

/** The data directory's admin kubeconfig read without the YAML library, or undefined for any other text. */
export function outpostKubeconfig(text: string): Kubeconfig | undefined {
  const m = OUTPOST_KUBECONFIG.exec(text);
  if (!m) return undefined;
  const [, server, ca, token] = m;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'admin@outpost',
    contexts: [{ name: 'admin@outpost', context: { cluster: 'outpost', user: 'admin' } }],
    clusters: [{ name: 'outpost', cluster: { server, ...(ca ? { 'certificate-authority-data': ca } : {}) } }],
    users: [{ name: 'admin', user: { token } }],
  };
}

/** What a kubeconfig's current context says about the server and the credentials. */
type FromKubeconfig = ConnectionFlags &
  Omit<ConnectionTls, 'ca' | 'cert' | 'key'> & { ca?: Buffer; cert?: Buffer; key?: Buffer };

/**
 * Reads the current context of a kubeconfig (the file kubectl would use): the data directory's
 * admin kubeconfig at once, any other with the reader `serve --cloud` uses (lib/cloud/kubeconfig.ts:
 * kubectl's rules for relative paths and `-data` fields, and a clear refusal of what Outpost does
 * not support), loaded only then.
 */
async function fromKubeconfig(path: string): Promise<FromKubeconfig> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new CliError(`error: loading kubeconfig ${path}: ${(e as Error).message}`);
  }
  const own = outpostKubeconfig(text);
  if (own) {
    const cluster = own.clusters![0]!.cluster;
    const ca = b64(cluster['certificate-authority-data']);
    return {
      server: cluster.server as string,
      token: own.users![0]!.user.token as string,
      ...(ca ? { ca } : {}),
    };
  }
  const { kubeconfigCredentials, parseKubeconfig } = await import('#lib/cloud/kubeconfig.ts');
  try {
    const kc = parseKubeconfig(text, { source: path, dir: dirname(resolve(path)) });
    const c = kubeconfigCredentials(kc);
    const auth = c.headers.authorization;
    if (auth && !auth.startsWith('Bearer '))
      throw new Error(
        `user "${kc.user?.name}": a username and password are not supported here; use a token or a client certificate`,
      );
    if (c.headers['impersonate-user'])
      throw new Error(`user "${kc.user?.name}": "as" (impersonation) is not supported here`);
    return {
      server: kc.cluster.server,
      ...(auth ? { token: auth.slice('Bearer '.length) } : {}),
      ...(c.ca ? { ca: c.ca } : {}),
      ...(c.cert ? { cert: c.cert } : {}),
      ...(c.key ? { key: c.key } : {}),
      ...(c.rejectUnauthorized === false ? { insecure: true } : {}),
      ...(c.servername ? { servername: c.servername } : {}),
    };
  } catch (e) {
    const msg = (e as Error).message;
    throw new CliError(`error: ${msg.startsWith('kubeconfig ') ? msg : `kubeconfig ${path}: ${msg}`}`);
  }
}

/**
 * Resolves the connection: explicit flags (or their OUTPOST_* variables) win over the kubeconfig
 * given with --kubeconfig (or $KUBECONFIG when --server is not given).
 */
export async function resolveConnection(
  f: ConnectionFlags,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Connection> {
  const kubeconfigPath = f.kubeconfig ?? (f.server ? undefined : env.OUTPOST_KUBECONFIG);
  let kc = kubeconfigPath ? await fromKubeconfig(kubeconfigPath) : {};
  let server = f.server;
  // Nothing says who to be: the admin kubeconfig Outpost wrote in its data directory, when this
  // user can read it (root-only) and it is for the same server. Its https:// URL wins over an
  // http:// one for the same port (the same server: HTTPS and HTTP share it), so the token is
  // never sent in clear text.
  let socketPath: string | undefined;
  if (!kubeconfigPath && !f.token && !f.clientCertificate) {
    const dataDir = env.OUTPOST_DATA_DIR || './data';
    const admin = await readableAdmin(join(dataDir, 'auth', 'admin.kubeconfig'));
    if (admin && (!f.server || sameServer(f.server, admin.server))) {
      kc = admin;
      server = admin.server ?? server;
      socketPath = usableSocket(join(dataDir, 'outpost.sock'));
    }
  }
  const ca = file('--certificate-authority', f.certificateAuthority) ?? kc.ca;
  const cert = file('--client-certificate', f.clientCertificate) ?? kc.cert;
  const key = file('--client-key', f.clientKey) ?? kc.key;
  server ??= kc.server ?? DEFAULT_SERVER;
  if (!URL.canParse(server) || !/^https?:$/.test(new URL(server).protocol)) {
    // commander fills f.server from OUTPOST_SERVER when the flag is absent.
    const from =
      f.server !== undefined && f.server === env.OUTPOST_SERVER
        ? 'OUTPOST_SERVER'
        : f.server !== undefined
          ? '--server'
          : `the server of kubeconfig ${kubeconfigPath}`;
    throw usageError(`error: ${from} ${JSON.stringify(server)}: expected an http:// or https:// URL`);
  }
  return {
    server,
    token: f.token ?? kc.token,
    tls:
      ca || cert || key || kc.insecure || kc.servername
        ? { ca, cert, key, insecure: kc.insecure, servername: kc.servername }
        : undefined,
    ...(socketPath ? { socketPath } : {}),
  };
}

export const defaultKubeconfig = () => join(homedir(), '.kube', 'config');

/** The data directory's admin kubeconfig, or undefined when it is absent or not readable here. */
async function readableAdmin(path: string): Promise<Awaited<ReturnType<typeof fromKubeconfig>> | undefined> {
  try {
    accessSync(path, constants.R_OK);
    return await fromKubeconfig(path);
  } catch {
    return undefined;
  }
}

/**
 * The local socket when this user may open it (it is 0600) and the runtime's HTTP client can
 * dial a unix socket (Node; Deno and Bun use TCP).
 */
function usableSocket(path: string): string | undefined {
  if (runtime !== 'node') return undefined;
  try {
    accessSync(path, constants.R_OK | constants.W_OK);
    return path;
  } catch {
    return undefined;
  }
}

/** The same host and port, whatever the scheme (Outpost answers HTTP and HTTPS on one port). */
const sameServer = (a: string, b: string | undefined): boolean => {
  try {
    const port = (u: URL) => u.port || (u.protocol === 'https:' ? '443' : '80');
    const [x, y] = [new URL(a), new URL(b ?? '')];
    return x.hostname === y.hostname && port(x) === port(y);
  } catch {
    return false;
  }
};
