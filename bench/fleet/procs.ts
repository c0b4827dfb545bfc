// Per-process costs the fleet bench samples on this machine: TCP connections to the API server and
// the bytes on them (from `ss -ti`, per socket) and CPU time (from /proc; RSS is bench/lib.ts's).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const TICKS = 100; // USER_HZ on Linux

/** CPU seconds (user + system) the process used so far, 0 when it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICKS;
  } catch {
    return 0;
  }
}

interface SocketBytes {
  pid: number;
  up: number;
  down: number;
}

/** Established connections to 127.0.0.1:`port`, keyed by local port: owner pid and bytes each way. */
export function sockets(port: number): Map<string, SocketBytes> {
  const out = new Map<string, SocketBytes>();
  let text = '';
  try {
    text = execFileSync('ss', ['-tinpH', 'state', 'established', `( dport = :${port} )`], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
  } catch {
    return out;
  }
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const head = lines[i]!;
    if (head.startsWith('\t') || !head.trim()) continue;
    const info = lines[i + 1]?.startsWith('\t') ? lines[i + 1]! : '';
    const local = head.trim().split(/\s+/)[2] ?? '';
    const pid = Number(/pid=(\d+)/.exec(head)?.[1] ?? 0);
    const up = Number(/bytes_acked:(\d+)/.exec(info)?.[1] ?? 0);
    const down = Number(/bytes_received:(\d+)/.exec(info)?.[1] ?? 0);
    if (pid) out.set(local, { pid, up, down });
  }
  return out;
}

/**
 * Bytes each way per pid over a window, sampled every few seconds: a socket's bytes count from
 * its first sample (or from 0 when it opened inside the window) to its last.
 */
export class ByteMeter {
  private first = new Map<string, SocketBytes>();
  private last = new Map<string, SocketBytes>();
  private seen = new Set<string>();
  private started = false;
  connections: number[] = [];

  constructor(private readonly port: number) {}

  sample(): void {
    const now = sockets(this.port);
    for (const [k, s] of now) {
      if (!this.first.has(k)) this.first.set(k, this.started ? { ...s, up: 0, down: 0 } : s);
      this.last.set(k, s);
      this.seen.add(k);
    }
    this.started = true;
    this.connections.push(now.size);
  }

  /** Bytes up and down of each pid in `pids` over the window, and its connections at the end. */
  totals(pids: Set<number>): { up: number; down: number; connections: number } {
    let up = 0;
    let down = 0;
    for (const [k, l] of this.last) {
      if (!pids.has(l.pid)) continue;
      const f = this.first.get(k)!;
      up += l.up - f.up;
      down += l.down - f.down;
    }
    const connections = [...sockets(this.port).values()].filter((s) => pids.has(s.pid)).length;
    return { up, down, connections };
  }
}
