// Answers on a socket that Node's HTTP server has handed over (an `upgrade` request), where no
// ServerResponse exists: every answer is written by hand and closes the connection.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { StatusError } from '#lib/kube/status.ts';

// Framing headers are rewritten: the body is sent whole and the connection closed after it.
const FRAMING = new Set(['connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade']);

/** An HTTP/1.1 head: status line and raw header pairs (`[name, value, name, value, ...]`). */
export function httpHead(status: number, message: string | undefined, rawHeaders: string[]): string {
  let head = `HTTP/1.1 ${status} ${message || STATUS_CODES[status] || ''}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) head += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  return `${head}\r\n`;
}

/** Writes a complete answer (head and body) and closes the socket. */
export function endWith(
  socket: Duplex,
  status: number,
  rawHeaders: string[],
  body: Buffer,
  message?: string,
): void {
  if (socket.destroyed) return;
  const kept = rawHeaders.filter((_, i) => !FRAMING.has(rawHeaders[i - (i % 2)]!.toLowerCase()));
  const head = httpHead(status, message, [
    ...kept,
    'Content-Length',
    String(body.length),
    'Connection',
    'close',
  ]);
  socket.end(Buffer.concat([Buffer.from(head, 'latin1'), body]));
}

/**
 * Writes a fetch `Response` (what the app answered) and closes the socket. The body is streamed
 * and delimited by the close, so an endless one (a watch) ends when the client goes away.
 */
export async function endWithResponse(socket: Duplex, res: Response): Promise<void> {
  if (socket.destroyed) return;
  const raw: string[] = [];
  for (const [name, value] of res.headers) if (!FRAMING.has(name)) raw.push(name, value);
  socket.write(httpHead(res.status, undefined, [...raw, 'Connection', 'close']));
  const reader = res.body?.getReader();
  socket.once('close', () => void reader?.cancel().catch(() => {}));
  try {
    for (let r = await reader?.read(); r && !r.done; r = await reader?.read()) {
      if (socket.destroyed) break;
      socket.write(r.value);
    }
  } catch {
    // the client left, or the body failed: either way the answer ends here
  }
  socket.end();
}

/** Writes a Status error as kubectl expects it (JSON, `kind: Status`) and closes the socket. */
export function endWithStatus(socket: Duplex, err: StatusError): void {
  endWith(
    socket,
    err.code,
    ['Content-Type', 'application/json'],
    Buffer.from(JSON.stringify(err.toStatus())),
  );
}
