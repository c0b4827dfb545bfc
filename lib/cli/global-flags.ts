// kubectl takes its global flags anywhere on the command line (`kubectl --kubeconfig F -n x get
// pods`, `kubectl get -n x pods`). Commander takes a subcommand's options only after its name, so
// the client flags given before the command are moved right after it before commander parses.
import type { Command } from 'commander';

/** The client flags kubectl treats as global, each taking a value (main.ts's clientFlags and -n). */
export const GLOBAL_FLAGS: readonly { long: string; short?: string }[] = [
  { long: '--server', short: '-s' },
  { long: '--token' },
  { long: '--kubeconfig' },
  { long: '--certificate-authority' },
  { long: '--client-certificate' },
  { long: '--client-key' },
  { long: '--namespace', short: '-n' },
];

/** How many tokens the global flag at args[i] spans (1 or 2), or 0 when it is not one. */
function globalFlagAt(args: readonly string[], i: number): number {
  const a = args[i]!;
  for (const f of GLOBAL_FLAGS) {
    if (a === f.long || a === f.short) return i + 1 < args.length ? 2 : 0;
    if (a.startsWith(`${f.long}=`)) return 1;
    // `-nkube-system`, as commander and kubectl's pflag read it.
    if (f.short && a.length > 2 && a.startsWith(f.short)) return 1;
  }
  return 0;
}

/**
 * Moves the global flags given before the command (or between a command and its subcommand, as
 * in `outpost ctl -n x get pods`) right after the command's name, where commander takes them;
 * everything else keeps its place. `args` is argv without node and the script.
 */
export function hoistGlobalFlags(root: Command, args: readonly string[]): string[] {
  const path: string[] = [];
  const hoisted: string[] = [];
  let cmd = root;
  let i = 0;
  while (i < args.length) {
    const n = globalFlagAt(args, i);
    if (n > 0) {
      hoisted.push(...args.slice(i, i + n));
      i += n;
      continue;
    }
    const name = args[i]!;
    const sub = cmd.commands.find((c) => c.name() === name || c.aliases().includes(name));
    if (!sub) break;
    path.push(name);
    cmd = sub;
    i++;
  }
  // No command found (`outpost -n x`): leave the line as it is, for commander's own error.
  if (hoisted.length === 0 || path.length === 0) return [...args];
  return [...path, ...hoisted, ...args.slice(i)];
}
