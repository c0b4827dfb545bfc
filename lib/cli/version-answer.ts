import { OUTPOST_VERSION } from '#lib/version.ts';

/**
 * What `outpost --version` and `outpost version --client` print, answered by the entries
 * (bin/outpost.ts, bin/outpost-node.ts) before anything else loads; undefined for any other command line.
 */
export function versionAnswer(args: readonly string[]): string | undefined {
  if (args.length === 1 && args[0] === '--version') return `${OUTPOST_VERSION}\n`;
  if (args.length === 2 && args[0] === 'version' && args[1] === '--client')
    return `Client Version: v${OUTPOST_VERSION}\n`;
  return undefined;
}
