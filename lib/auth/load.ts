import { readFileSync } from 'node:fs';
import { ConfigError, isLoopbackHost, type ServeConfig } from '#lib/config.ts';
import type { Logger } from '#lib/log.ts';
import type { AuthConfig } from './authenticate.ts';
import type { Role } from './roles.ts';
import { TokenTable } from './tokens.ts';

export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer | undefined;
}

/** What a TCP caller without credentials may do when no authentication is configured. */
export const ANONYMOUS_ROLE: Role = 'viewer';

const read = (flag: string, file: string): Buffer => {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new ConfigError(`${flag} ${file}: ${(e as Error).message}`);
  }
};

/**
 * Builds authentication and TLS from the serve flags, and enforces the safe default: a
 * non-loopback listener without authentication refuses to start unless explicitly allowed.
 */
export function loadSecurity(
  config: ServeConfig,
  host: string,
  log: Logger,
): { auth: AuthConfig; tls: TlsFiles | undefined } {
  let tokens: TokenTable | undefined;
  if (config.tokensFile) {
    try {
      tokens = new TokenTable(config.tokensFile, log.child({ module: 'auth' }));
    } catch (e) {
      throw new ConfigError(`--tokens-file ${config.tokensFile}: ${(e as Error).message}`);
    }
    tokens.watch();
  }
  const tls =
    config.tlsCert && config.tlsKey
      ? {
          cert: read('--tls-cert', config.tlsCert),
          key: read('--tls-key', config.tlsKey),
          ca: config.clientCa ? read('--client-ca', config.clientCa) : undefined,
        }
      : undefined;
  const explicit = !!tokens || !!tls?.ca;
  // Callers without credentials read non-secret objects (ANONYMOUS_ROLE) unless tokens or client
  // certificates are configured (then a 401); --anonymous-role says otherwise.
  const anonymous: Role | undefined =
    config.anonymousRole === 'none'
      ? undefined
      : (config.anonymousRole ?? (explicit ? undefined : ANONYMOUS_ROLE));
  const auth: AuthConfig = { tokens, clientCerts: !!tls?.ca, anonymous };
  if (anonymous && !isLoopbackHost(host)) {
    if (!config.insecureAllowUnauthenticated) {
      tokens?.close();
      throw new ConfigError(
        `--listen ${config.listen} is reachable beyond this machine and callers without credentials would be ${anonymous}s: ` +
          'give --tokens-file (see `outpost token create`), --client-ca or --anonymous-role none, or --insecure-allow-unauthenticated to accept the risk',
      );
    }
    log.warn(
      { listen: config.listen, anonymousRole: anonymous },
      anonymous === 'admin'
        ? 'INSECURE: callers without credentials are admins beyond loopback; anyone who reaches this port can exec into every container'
        : 'INSECURE: callers without credentials beyond loopback read every pod, ConfigMap and device',
    );
  }
  if (anonymous === 'admin' && isLoopbackHost(host)) {
    log.warn(
      { listen: config.listen, anonymousRole: anonymous },
      'INSECURE: --anonymous-role admin: every local process, any pod in the host network included, can exec into every container',
    );
  }
  if (!tls && explicit && !isLoopbackHost(host)) {
    log.warn({ listen: config.listen }, 'bearer tokens travel in clear text without --tls-cert/--tls-key');
  }
  return { auth, tls };
}
