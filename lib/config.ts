import { hostname } from 'node:os';
import { resolve } from 'node:path';
import * as z from 'zod';
import { parseQuantity } from './kube/quantity.ts';
import type { LogLevel } from './log.ts';

/** `host:port`, `[v6]:port` or `:port`; a bad value is a configuration error naming `source`. */
export function parseListen(value: string, source = '--listen'): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value);
  const port = Number(m?.[3]);
  if (!m || port > 65535)
    throw new ConfigError(`${source} ${JSON.stringify(value)}: expected HOST:PORT, e.g. 127.0.0.1:10550`);
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

/** Invalid configuration: Outpost stops at once with a distinct exit code. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1e3, m: 6e4, h: 3.6e6 };

// zod (4.6) puts each schema type's lazy getters on the type's prototype, in closures that keep the
// first instance of the type ever built reachable for the process's life. The serve options'
// schema is built once and dropped; this empty object schema, built as the module loads, is the
// first object schema instead, so that the options' schema (about 150 schema objects) can be freed.
z.object({});

/**
 * The serve options' schema, built for each use and not kept: the agent validates its
 * configuration once at start, and the schema's objects (each with its own bound methods) would
 * otherwise stay in the heap for the process's life (docs/performance.md).
 */
function serveConfigSchema() {
  /** A switch given as a flag (boolean) or from the environment ('true'/'false'); off by default. */
  const booleanFlag = z
    .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])
    .default(false);

  /** `15m`, `1h30m`, `90s` (Go's duration syntax, units ms to h) in milliseconds; `0` is zero. */
  const duration = z.union([z.number(), z.string()]).transform((v, ctx) => {
    const text = String(v).trim();
    if (text === '0') return 0;
    const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
    if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) {
      ctx.addIssue({
        code: 'custom',
        message: 'expected a duration such as 15m, 1h or 90s (0 turns it off)',
      });
      return z.NEVER;
    }
    return parts.reduce((ms, p) => ms + Number(p[1]) * DURATION_UNITS[p[2]!]!, 0);
  });

  /** A byte size as kubelet's flags take it (`10Mi`, `512Ki`, `1000000`), in whole bytes. */
  const byteSize = z.union([z.number(), z.string()]).transform((v, ctx) => {
    try {
      const q = parseQuantity(v);
      if (q.num > 0n && q.num % q.den === 0n) return Number(q.num / q.den);
    } catch {}
    ctx.addIssue({ code: 'custom', message: 'expected a size in bytes such as 10Mi, 512Ki or 1000000' });
    return z.NEVER;
  });

  return z.object({
    listen: z.string().default('127.0.0.1:10550'),
    // SQLite's `:memory:` is not a directory: serve keeps its metabase, credentials, sockets and pod
    // logs under this one, which the runtime is handed by path.
    dataDir: z
      .string()
      .min(1)
      .refine((d) => d !== ':memory:', {
        message:
          "':memory:' is not a directory: the agent keeps its metabase, credentials and pod logs under one (for a node that keeps nothing across reboots, a tmpfs such as /run/outpost)",
      })
      .default('./data'),
    manifests: z.string().optional(),
    nodeName: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a lowercase RFC 1123 subdomain')
      .default(() => hostname().toLowerCase()),
    runtimeEndpoint: z.string().default('unix:///run/containerd/containerd.sock'),
    /** A pull that cannot reach the registry: `fallback` starts from the local image, `strict` fails (kubelet). */
    imagePull: z.enum(['fallback', 'strict']).default('fallback'),
    /** The DMI DeviceManagerService unix socket mappers register on; unset: `DATA_DIR/dmi.sock`. */
    dmiSocket: z.string().min(1).optional(),
    durability: z.enum(['full', 'normal']).default('full'),
    /** How often a verified snapshot of the metabase is taken (ms; 0: only before migrations). */
    snapshotInterval: duration
      .default(15 * 60_000)
      .refine((ms) => ms === 0 || ms >= 1000, 'at least 1s, or 0'),
    /** Snapshots kept in DATA_DIR/snapshots, newest first. */
    snapshotKeep: z.coerce.number().int().min(1).max(100).default(3),
    /** A running container's log is rotated past this size (kubelet's --container-log-max-size). */
    containerLogMaxSize: byteSize.default(10 * 1024 * 1024).refine((n) => n >= 1024, 'at least 1Ki'),
    /** Log files kept per container, the current one included (kubelet's --container-log-max-files). */
    containerLogMaxFiles: z.coerce.number().int().min(2).default(5),
    /** How often container log sizes are checked (kubelet's containerLogMonitorInterval). */
    containerLogMonitorInterval: duration.default(10_000).refine((ms) => ms >= 100, 'at least 100ms'),
    /** Bearer tokens (`outpost token create`); reloaded when the file changes. */
    tokensFile: z.string().min(1).optional(),
    tlsCert: z.string().min(1).optional(),
    tlsKey: z.string().min(1).optional(),
    /** Verify client certificates against this CA (CN = user, O = role). Needs TLS. */
    clientCa: z.string().min(1).optional(),
    /**
     * What a TCP caller without credentials may do: `viewer` reads non-secret objects (default without
     * --tokens-file/--client-ca), `none` gets 401 (default with them), `admin` is everything (insecure).
     */
    anonymousRole: z.enum(['viewer', 'admin', 'none']).optional(),
    /** Listen beyond loopback with no authentication (loudly warned about). */
    insecureAllowUnauthenticated: booleanFlag,
    /** Requests a second per LAN client (loopback is exempt); 0 disables. */
    rateLimit: z.coerce.number().int().min(0).default(50),
    maxBodyBytes: z.coerce
      .number()
      .int()
      .min(1024)
      .default(1 << 20),
    maxExecSessions: z.coerce.number().int().min(1).default(16),
    maxLogStreams: z.coerce.number().int().min(1).default(32),
    logLevel: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
    /** The node API (kubelet's port) with --cloud; 0 picks a free port. Off without --cloud. */
    kubeletPort: z.coerce.number().int().min(0).max(65535).default(10250),
    /** The address the Node reports (InternalIP) and the node API's certificate names. */
    nodeIp: z.ipv4().or(z.ipv6()).optional(),
    /** MQTT broker for the KubeEdge EventBus topics and Home Assistant discovery (off when unset). */
    mqtt: z
      .string()
      .regex(/^(mqtts?|tcp|tls|wss?):\/\/[^/\s]+\/?$/, 'expected mqtt://HOST:PORT or mqtts://HOST:PORT')
      .optional(),
    mqttUsername: z.string().min(1).optional(),
    mqttPassword: z.string().optional(),
    /** CA bundle (PEM) that verifies the broker's certificate (mqtts://). */
    mqttCa: z.string().min(1).optional(),
    /** Client certificate and key (PEM) for brokers that authenticate clients by certificate. */
    mqttCert: z.string().min(1).optional(),
    mqttKey: z.string().min(1).optional(),
    mqttInsecure: booleanFlag,
    mqttTopicPrefix: z
      .string()
      .regex(/^[^#+\s]+$/, 'no wildcards or spaces')
      .default('outpost'),
    mqttDiscoveryPrefix: z
      .string()
      .regex(/^[^#+\s]+$/, 'no wildcards or spaces')
      .default('homeassistant'),
    /** A kubeconfig: join its cluster as node `nodeName` (the cloud link); unset: standalone. */
    cloud: z.string().min(1).optional(),
    /** The node Lease's duration with --cloud; renewed every quarter of it (kubelet: 40 s, every 10 s). */
    nodeLeaseDuration: duration.default(40_000).refine((ms) => ms >= 4000, 'at least 4s'),
    /** With --cloud, the node status is patched on a change or at least this often (kubelet: 5m). */
    nodeStatusReportFrequency: duration.default(300_000).refine((ms) => ms >= 1000, 'at least 1s'),
  });
}
export type ServeConfig = z.infer<ReturnType<typeof serveConfigSchema>> & { logLevel: LogLevel };

/** The environment variable of a serve option: `dataDir` → `OUTPOST_DATA_DIR`. */
export const envName = (key: string): string =>
  ENV_NAMES[key] ?? `OUTPOST_${key.replace(/[A-Z]/g, (m) => `_${m}`).toUpperCase()}`;

/** Environment names that are not `OUTPOST_<FLAG>`. */
const ENV_NAMES: Record<string, string> = { cloud: 'OUTPOST_CLOUD_KUBECONFIG' };

/** The flag of a serve option: `dataDir` → `--data-dir`. */
export const flagName = (key: string): string => `--${key.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`)}`;

/** Each serve flag may also come from `OUTPOST_<FLAG>` (e.g. OUTPOST_DATA_DIR); flags win. */
export function envDefaults(
  env: NodeJS.ProcessEnv = process.env,
  schema = serveConfigSchema(),
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = env[envName(key)];
    if (value !== undefined && value !== '') out[key] = value;
  }
  return out;
}

/** Validates serve options (flags over environment over defaults); throws ConfigError. */
export function resolveServeConfig(
  flags: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
): ServeConfig {
  const schema = serveConfigSchema();
  const given = Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined));
  const fromEnv = envDefaults(env, schema);
  // An error names what the user wrote: the flag, or the variable when the value came from there.
  const source = (key: string) =>
    key in given || !(key in fromEnv) ? flagName(key) : `${envName(key)}=${JSON.stringify(fromEnv[key])}`;
  // Without zod's fast path: it writes and compiles a parser for the object's 50-odd fields at its
  // first parse, which costs the start more than the one parse it would speed up (docs/performance.md).
  const result = schema.safeParse({ ...fromEnv, ...given }, { jitless: true });
  if (!result.success) {
    const msg = result.error.issues.map((i) => `${source(String(i.path[0]))}: ${i.message}`);
    throw new ConfigError(msg.join('; '));
  }
  const cfg = result.data as ServeConfig;
  // Paths handed to the runtime (volumes, log directories) must not depend on containerd's cwd.
  cfg.dataDir = resolve(cfg.dataDir);
  if (cfg.cloud) cfg.cloud = resolve(cfg.cloud);
  // The cloud link's HTTP client (undici) parses HTTP with llhttp's WebAssembly, which node's
  // --jitless (and --lite-mode, which implies it) removes; serving alone needs none.
  if (cfg.cloud && !('WebAssembly' in globalThis))
    throw new ConfigError(
      '--cloud needs WebAssembly (the cloud link parses HTTP with it), which this runtime lacks: node runs with --jitless or --lite-mode; start it without them to join a cluster',
    );
  parseListen(cfg.listen, 'listen' in given || !('listen' in fromEnv) ? '--listen' : 'OUTPOST_LISTEN');
  if (!!cfg.tlsCert !== !!cfg.tlsKey) throw new ConfigError('--tls-cert and --tls-key go together');
  if (cfg.clientCa && !cfg.tlsCert) throw new ConfigError('--client-ca needs TLS (--tls-cert and --tls-key)');
  if (!!cfg.mqttCert !== !!cfg.mqttKey) throw new ConfigError('--mqtt-cert and --mqtt-key go together');
  return cfg;
}

/** Whether a listen host is loopback only (127.0.0.0/8, ::1, localhost). */
export const isLoopbackHost = (host: string): boolean =>
  host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
