import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, type FSWatcher, readFileSync, statSync, watch } from 'node:fs';
import type { Logger } from '#lib/log.ts';
import { isRole, type Role } from './roles.ts';

/**
 * The tokens file: one `sha256:HEX,USER,ROLE` line per token (`#` comments allowed). Only hashes
 * are stored; `outpost token create` prints a token once.
 */
export interface TokenEntry {
  hash: string;
  user: string;
  role: Role;
}

export const hashToken = (token: string): string =>
  `sha256:${createHash('sha256').update(token, 'utf8').digest('hex')}`;

/** Parses the file's text; a malformed line is an error naming its line number. */
export function parseTokens(text: string, file = 'tokens file'): Map<string, TokenEntry> {
  const out = new Map<string, TokenEntry>();
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const [hash, user, role, ...rest] = line.split(',').map((s) => s.trim());
    if (!hash || !/^sha256:[0-9a-f]{64}$/.test(hash) || !user || !role || rest.length) {
      throw new Error(`${file}:${i + 1}: expected sha256:HEX,USER,ROLE`);
    }
    if (!isRole(role)) throw new Error(`${file}:${i + 1}: unknown role "${role}" (viewer, operator, admin)`);
    out.set(hash, { hash, user, role });
  });
  return out;
}

/** Creates a token for a user, appends its hash to the file (mode 0600) and returns the token. */
export function createToken(file: string, user: string, role: Role): string {
  if (!/^[A-Za-z0-9._@:-]{1,128}$/.test(user)) throw new Error(`invalid user name "${user}"`);
  if (existsSync(file)) parseTokens(readFileSync(file, 'utf8'), file);
  const token = `opt_${randomBytes(32).toString('base64url')}`;
  appendFileSync(file, `${hashToken(token)},${user},${role}\n`, { mode: 0o600 });
  return token;
}

/** The tokens file as a live table: reloaded when the file changes, the last good version kept on errors. */
export class TokenTable {
  #entries = new Map<string, TokenEntry>();
  #watcher: FSWatcher | undefined;
  #mtime = 0;

  constructor(
    readonly file: string,
    private readonly log: Logger,
  ) {
    this.#entries = parseTokens(readFileSync(file, 'utf8'), file);
    this.#mtime = statSync(file).mtimeMs;
  }

  /** The entry for a bearer token, or undefined. */
  lookup(token: string): TokenEntry | undefined {
    this.#maybeReload();
    return this.#entries.get(hashToken(token));
  }

  get size(): number {
    return this.#entries.size;
  }

  // fs.watch can miss an editor's rename; a cheap stat on lookup catches every change.
  #maybeReload(): void {
    let mtime: number;
    try {
      mtime = statSync(this.file).mtimeMs;
    } catch {
      return;
    }
    if (mtime !== this.#mtime) this.reload();
  }

  reload(): void {
    try {
      this.#mtime = statSync(this.file).mtimeMs;
      this.#entries = parseTokens(readFileSync(this.file, 'utf8'), this.file);
      this.log.info({ file: this.file, tokens: this.#entries.size }, 'tokens reloaded');
    } catch (err) {
      this.log.error({ err, file: this.file }, 'tokens file not reloaded; keeping the previous tokens');
    }
  }

  watch(): void {
    this.#watcher = watch(this.file, { persistent: false }, () => this.reload());
    this.#watcher.on('error', () => {});
  }

  close(): void {
    this.#watcher?.close();
  }
}
