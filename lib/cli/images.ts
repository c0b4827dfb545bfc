// `outpost images` (the runtime's images, crictl-like columns plus PINNED and USED-BY) and
// `outpost images load FILE` (containerd's import of an archive on the node).
import { resolve } from 'node:path';
import type { ImageItem } from '#lib/pods/images/list.ts';
import { type ApiClient, usageError } from './client.ts';
import { runClient, stdio } from './commands.ts';
import type { ConnectionFlags } from './connection.ts';
import type { Io } from './get.ts';
import { TabWriter } from './print-table.ts';
import { toYaml } from './yaml.ts';

/** crictl's size: decimal units, 3 significant digits (`2.13MB`). */
export function imageSize(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let n = bytes;
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return `${i === 0 ? n : Number(n.toPrecision(3))}${units[i]}`;
}

/** `registry/repo:tag` → [`registry/repo`, `tag`]; a port's colon is not a tag's. */
function splitTag(ref: string): [string, string] {
  const at = ref.lastIndexOf(':');
  return at > ref.lastIndexOf('/') ? [ref.slice(0, at), ref.slice(at + 1)] : [ref, '<none>'];
}

/** The table: one row per tag (an untagged image gets one `<none>` row), as crictl images. */
export function imagesTable(items: ImageItem[], noHeaders = false): string {
  const w = new TabWriter();
  if (!noHeaders) w.write('REPOSITORY\tTAG\tIMAGE ID\tSIZE\tPINNED\tUSED-BY\n');
  for (const img of items) {
    const id = img.id.replace(/^sha256:/, '').slice(0, 13);
    const used = img.usedBy.length ? img.usedBy.join(',') : '<none>';
    const tags = img.repoTags.length ? img.repoTags.map(splitTag) : [['<none>', '<none>'] as const];
    for (const [repo, tag] of tags)
      w.write(`${repo}\t${tag}\t${id}\t${imageSize(img.size)}\t${img.pinned}\t${used}\n`);
  }
  return w.flush();
}

async function list(client: ApiClient, output: string | undefined, noHeaders: boolean, io: Io) {
  if (output !== undefined && !['json', 'yaml'].includes(output))
    throw usageError(
      `error: unable to match a printer suitable for the output format "${output}", allowed formats are: json,yaml`,
    );
  const data = await client.json<{ items: ImageItem[] }>('/images');
  if (output === 'json') io.out(`${JSON.stringify(data, null, 4)}\n`);
  else if (output === 'yaml') io.out(toYaml(data));
  else io.out(data.items.length ? imagesTable(data.items, noHeaders) : 'No images found.\n');
  return 0;
}

async function load(client: ApiClient, file: string, io: Io) {
  // The agent reads the file: the path must mean the same to it, so it goes absolute.
  const res = await client.send('POST', '/images/load', { body: { path: resolve(file) } });
  const result = (await res.body.json()) as { images: string[] };
  io.out(result.images.map((name) => `Loaded image: ${name}\n`).join(''));
  return 0;
}

/** `outpost images` with the flags commander parsed (lib/cli/main.ts). */
export const imagesCommand = (o: ConnectionFlags & { output?: string; headers?: boolean }): Promise<number> =>
  runClient(o, (client) => list(client, o.output, o.headers === false, stdio));

/** `outpost images load FILE`. */
export const imagesLoadCommand = (file: string, o: ConnectionFlags): Promise<number> =>
  runClient(o, (client) => load(client, file, stdio));
