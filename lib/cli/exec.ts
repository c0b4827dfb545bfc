import { WebSocket } from 'ws';
import type { Status } from '#lib/kube/status.ts';
import { CliError, statusLine, tlsOptions, usageError } from './client.ts';
import { type ConnectionFlags, resolveConnection } from './connection.ts';

const PROTOCOL = 'v5.channel.k8s.io';
const [STDIN, STDOUT, STDERR, STATUS, RESIZE, CLOSE] = [0, 1, 2, 3, 4, 255];

export interface ExecFlags extends ConnectionFlags {
  namespace: string;
  container?: string | undefined;
  stdin: boolean;
  tty: boolean;
}

/** The terminal and pipes a session uses (process's own by default). */
export interface ExecIo {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

const processIo: ExecIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };

/** The exec URL kubectl 1.30+ opens (same query, `ws:` scheme). */
export function execUrl(pod: string, command: string[], f: ExecFlags): URL {
  let url: URL;
  try {
    const path = `/api/v1/namespaces/${encodeURIComponent(f.namespace)}/pods/${encodeURIComponent(pod)}/exec`;
    url = new URL(path, f.server ?? 'http://127.0.0.1:10550');
  } catch {
    throw usageError(`error: invalid server URL "${f.server}"`);
  }
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  for (const c of command) url.searchParams.append('command', c);
  if (f.container) url.searchParams.set('container', f.container);
  if (f.stdin) url.searchParams.set('stdin', 'true');
  url.searchParams.set('stdout', 'true');
  // With a TTY the terminal merges stderr into stdout (kubectl asks the same).
  url.searchParams.set('stderr', f.tty ? 'false' : 'true');
  if (f.tty) url.searchParams.set('tty', 'true');
  return url;
}

/** What the status frame means for the exit code and the line kubectl prints. */
function outcome(
  status: Partial<Status> & { details?: { causes?: { reason?: string; message?: string }[] } },
) {
  if (status.status === 'Success') return { code: 0 };
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  const n = Number.parseInt(cause?.message ?? '', 10);
  if (status.reason === 'NonZeroExitCode' && Number.isInteger(n)) {
    return { code: n, line: `command terminated with exit code ${n}` };
  }
  return { code: 1, line: `error: ${status.message ?? 'the command failed'}` };
}

/**
 * `outpost exec POD -- CMD...`: a v5.channel.k8s.io session with Outpost, as kubectl ≥ 1.30 opens
 * it. Stdin is piped until it ends (then the close signal, so the command reads EOF); with `-t` and
 * a terminal, raw mode and resizes. Resolves with the command's exit code.
 */
export async function execCommand(
  pod: string,
  command: string[],
  f: ExecFlags,
  io: ExecIo = processIo,
): Promise<number> {
  pod = pod.replace(/^(pod|pods|po)\//i, '');
  if (command.length === 0)
    throw usageError('error: you must specify at least one command for the container');
  let tty = f.tty;
  if (tty && !(f.stdin && io.stdin.isTTY)) {
    io.stderr.write('Unable to use a TTY - input is not a terminal or the right kind of file\n');
    tty = false;
  }
  const conn = await resolveConnection(f);
  const url = execUrl(pod, command, { ...f, server: conn.server, tty });
  const headers: Record<string, string> = conn.token ? { authorization: `Bearer ${conn.token}` } : {};
  const ws = new WebSocket(url, [PROTOCOL], {
    headers,
    perMessageDeflate: false,
    handshakeTimeout: 10_000,
    ...tlsOptions(conn.tls),
  });
  return new Promise((resolve, reject) => {
    let status: ReturnType<typeof outcome> | undefined;
    let restore = () => {};
    const send = (channel: number, data: Buffer) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(Buffer.concat([Buffer.of(channel), data]));
    };
    const resize = () =>
      send(
        RESIZE,
        Buffer.from(JSON.stringify({ Width: io.stdout.columns ?? 80, Height: io.stdout.rows ?? 24 })),
      );

    ws.on('unexpected-response', (req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => {
        let s: Partial<Status>;
        try {
          s = JSON.parse(body) as Status;
        } catch {
          s = { message: body.trim() || `HTTP ${res.statusCode}` };
        }
        reject(new CliError(statusLine(s, res.statusCode ?? 500)));
        req.destroy();
      });
    });
    ws.on('error', (e) => {
      const code = (e as { code?: string }).code;
      reject(
        new CliError(
          code === 'ECONNREFUSED'
            ? `The connection to the server ${url.host} was refused - did you specify the right host or port?`
            : `error: ${e.message}`,
        ),
      );
    });
    ws.on('open', () => {
      if (tty) {
        // kubectl's raw mode; libuv keeps ONLCR, so the remote's \r\n shows as \r\r\n (invisibly).
        io.stdin.setRawMode(true);
        io.stdout.on('resize', resize);
        restore = () => {
          io.stdin.setRawMode(false);
          io.stdout.off('resize', resize);
        };
        resize();
      }
      if (f.stdin) {
        io.stdin.on('data', (d: Buffer) => send(STDIN, d));
        io.stdin.on('end', () => send(CLOSE, Buffer.of(STDIN)));
        io.stdin.resume();
      }
    });
    ws.on('message', (data: Buffer, isBinary) => {
      if (!isBinary || data.length === 0) return;
      const payload = data.subarray(1);
      if (data[0] === STDOUT) io.stdout.write(payload);
      else if (data[0] === STDERR) io.stderr.write(payload);
      else if (data[0] === STATUS) {
        try {
          status = outcome(JSON.parse(payload.toString('utf8')) as Partial<Status>);
        } catch {
          status = { code: 1, line: `error: ${payload.toString('utf8')}` };
        }
      }
    });
    ws.on('close', (code) => {
      restore();
      if (f.stdin) io.stdin.pause();
      if (!status) {
        if (code !== 1000)
          reject(new CliError(`error: the connection to Outpost closed unexpectedly (${code})`));
        else resolve(0);
        return;
      }
      if (status.line) io.stderr.write(`${status.line}\n`);
      resolve(status.code);
    });
  });
}
