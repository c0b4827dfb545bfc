// The node's own admin credential, as kubeadm writes admin.conf: made on the first start in
// DATA_DIR/auth (mode 0700, files 0600), kept across restarts, and written as a kubeconfig the
// `outpost` CLI reads by itself and kubectl reads with --kubeconfig.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createToken, hashToken } from './tokens.ts';

/** Where a data directory keeps the admin credential. */
export const authDir = (dataDir: string): string => join(dataDir, 'auth');
/** The admin kubeconfig of a data directory. */
export const adminKubeconfigPath = (dataDir: string): string => join(authDir(dataDir), 'admin.kubeconfig');
const tokensPath = (dataDir: string) => join(authDir(dataDir), 'admin.tokens');

export interface AdminCredential {
  /** The tokens file (hash only) the agent authenticates the admin token with. */
  tokensFile: string | undefined;
  token: string;
  hash: string;
}

/** The data directory's admin token, made on the first start; `:memory:` gets one for this run only. */
export function ensureAdminCredential(dataDir: string): AdminCredential {
  if (dataDir === ':memory:') {
    const token = `opt_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')}`;
    return { tokensFile: undefined, token, hash: hashToken(token) };
  }
  const dir = authDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700); // root-only, whatever the umask or an earlier version left
  const kubeconfig = adminKubeconfigPath(dataDir);
  const tokens = tokensPath(dataDir);
  const known = existsSync(kubeconfig) && existsSync(tokens) ? tokenOf(kubeconfig) : undefined;
  if (known && readFileSync(tokens, 'utf8').includes(hashToken(known))) {
    return { tokensFile: tokens, token: known, hash: hashToken(known) };
  }
  const tmp = `${tokens}.tmp`;
  writeFileSync(tmp, '', { mode: 0o600 });
  const token = createToken(tmp, 'admin', 'admin');
  renameSync(tmp, tokens);
  writeKubeconfig(kubeconfig, 'http://127.0.0.1:10550', token);
  return { tokensFile: tokens, token, hash: hashToken(token) };
}

/**
 * Writes the admin kubeconfig (mode 0600) for the server the agent listens on; an https server's
 * CA goes in with it, so kubectl verifies the server and sends the token (it does over TLS only).
 */
export function writeAdminKubeconfig(dataDir: string, server: string, token: string, caPem?: string): void {
  if (dataDir === ':memory:') return;
  writeKubeconfig(adminKubeconfigPath(dataDir), server, token, caPem);
}

function writeKubeconfig(path: string, server: string, token: string, caPem?: string): void {
  const ca = caPem ? `\n      certificate-authority-data: ${Buffer.from(caPem).toString('base64')}` : '';
  const text = `apiVersion: v1
kind: Config
clusters:
  - name: outpost
    cluster:
      server: ${server}${ca}
users:
  - name: admin
    user:
      token: ${token}
contexts:
  - name: admin@outpost
    context: {cluster: outpost, user: admin}
current-context: admin@outpost
`;
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, path);
}

/**
 * The token of the kubeconfig writeKubeconfig wrote (its one `token:` line; no YAML parser at
 * start). A token read wrongly is not in the tokens file, so a new one is made.
 */
function tokenOf(kubeconfig: string): string | undefined {
  try {
    return /^\s*token:\s*(opt_[\w-]+)\s*$/m.exec(readFileSync(kubeconfig, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}
