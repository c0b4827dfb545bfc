import { mkdirSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';

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

/** Makes `path` bindable: creates its directory, removes a stale socket file, refuses a live one. */
export async function prepareSocket(path: string, what: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  if (!statSync(path, { throwIfNoEntry: false })) return;
  if (await socketInUse(path)) throw new Error(`${what} socket ${path} is in use by another process`);
  rmSync(path, { force: true });
}
