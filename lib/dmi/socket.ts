import { mkdirSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';

/**
 * The longest path a unix socket may have: sun_path holds 108 bytes on Linux (104 on macOS and the
 * BSDs) with the closing NUL. Node binds a longer path cut short, somewhere nobody looks.
 */
export const MAX_SOCKET_PATH = process.platform === 'linux' ? 107 : 103;

/** Why `path` cannot be a unix socket's path (it is too long, named with its length), else undefined. */
export function socketPathTooLong(path: string): string | undefined {
  const bytes = Buffer.byteLength(path);
  if (bytes <= MAX_SOCKET_PATH) return undefined;
  return `${path} is ${bytes} bytes long, longer than the ${MAX_SOCKET_PATH} a unix socket path may have (sun_path)`;
}

/** Whether something answers on a unix socket (a live process) rather than a stale file. */
export function socketInUse(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Makes `path` bindable: refuses one too long, creates its directory, removes a stale socket file, refuses a live one. */
export async function prepareSocket(path: string, what: string): Promise<void> {
  const tooLong = socketPathTooLong(path);
  if (tooLong) throw new Error(`${what} socket ${tooLong}`);
  mkdirSync(dirname(path), { recursive: true });
  if (!statSync(path, { throwIfNoEntry: false })) return;
  if (await socketInUse(path)) throw new Error(`${what} socket ${path} is in use by another process`);
  rmSync(path, { force: true });
}
