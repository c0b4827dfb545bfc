import { networkInterfaces } from 'node:os';

/** The node's first non-internal IPv4 address (what host-network pods report as their IP). */
export function nodeIP(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}
