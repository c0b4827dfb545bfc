// `outpost edit device NAME`, as kubectl edit works on a custom resource: the object as YAML in
// $EDITOR, then a JSON merge patch of what changed. A file that does not parse, or a change the
// server refuses, reopens the editor with the error on top as comments; no change sends nothing.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { createMergePatch, isEmptyPatch } from '#lib/kube/merge-patch.ts';
import type { KubeObject } from '#lib/kube/types.ts';
import { type ApiClient, CliError, usageError } from './client.ts';
import { runClient, stdio } from './commands.ts';
import type { ConnectionFlags } from './connection.ts';
import type { Io } from './get.ts';
import { collectionPath, resolveResource } from './resources.ts';
import { toYaml } from './yaml.ts';

const HEADER = `# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
`;

const comment = (text: string) =>
  text
    .split('\n')
    .map((l) => `# ${l}`.trimEnd())
    .join('\n');

/** The file's content without comment lines, as kubectl compares and parses it. */
const stripComments = (text: string) =>
  text
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#'))
    .join('\n')
    .trim();

/** The editor command: OUTPOST_EDITOR, KUBE_EDITOR, EDITOR, else vi. */
export const editorCommand = (env: NodeJS.ProcessEnv = process.env): string =>
  env.OUTPOST_EDITOR || env.KUBE_EDITOR || env.EDITOR || 'vi';

function runEditor(editor: string, file: string): void {
  // Through the shell, so EDITOR may carry arguments (`code --wait`) as kubectl allows.
  const r = spawnSync('/bin/sh', ['-c', `${editor} "$1"`, 'sh', file], { stdio: 'inherit' });
  if (r.error || r.status !== 0)
    throw new CliError(
      `error: there was a problem with the editor "${editor}"${r.error ? `: ${r.error.message}` : ''}`,
    );
}

export interface EditOptions {
  namespace: string;
  editor?: string;
}

/** Runs the edit loop; returns the exit code. */
export async function edit(
  client: ApiClient,
  type: string,
  name: string | undefined,
  o: EditOptions,
  io: Io,
) {
  if (type.includes('/')) [type, name] = type.split('/') as [string, string];
  const r = resolveResource(type);
  if (r.kind !== 'Device') throw usageError(`error: outpost edit supports devices only, not ${r.plural}`);
  if (!name) throw usageError('error: a device name is required: outpost edit device NAME');
  const path = `${collectionPath(r, o.namespace)}/${encodeURIComponent(name)}`;
  const original = await client.json<KubeObject>(path);
  const what = `${r.plural}.devices.kubeedge.io "${name}"`;
  const dir = mkdtempSync(join(tmpdir(), 'outpost-edit-'));
  const file = join(dir, `${r.plural}-${name}.yaml`);
  let body = toYaml(original);
  let errorHeader = '';
  let lastTried: string | undefined;
  try {
    for (;;) {
      writeFileSync(file, `${errorHeader}${HEADER}${body}`);
      runEditor(o.editor ?? editorCommand(), file);
      const edited = readFileSync(file, 'utf8');
      const content = stripComments(edited);
      if (content === '') {
        io.out('Edit cancelled, saved file was empty.\n');
        return 0;
      }
      // Saved as it was reopened: the user gave up on the failed change.
      if (lastTried !== undefined && content === lastTried) {
        io.err(`error: Edit cancelled, no valid changes were saved.\n`);
        return 1;
      }
      if (lastTried === undefined && content === stripComments(toYaml(original))) {
        io.out('Edit cancelled, no changes made.\n');
        return 0;
      }
      lastTried = content;
      body = `${content}\n`;
      let obj: unknown;
      try {
        obj = parse(content);
      } catch (e) {
        errorHeader = `${comment(`The edited file had a syntax error: ${(e as Error).message}`)}\n#\n`;
        continue;
      }
      if (!obj || typeof obj !== 'object' || Array.isArray(obj)) {
        errorHeader = `${comment('The edited file is not an object.')}\n#\n`;
        continue;
      }
      const patch = createMergePatch(original, obj);
      if (isEmptyPatch(patch)) {
        io.out('Edit cancelled, no changes made.\n');
        return 0;
      }
      try {
        await client.send('PATCH', path, { body: patch, contentType: 'application/merge-patch+json' });
      } catch (e) {
        // A refusal from the server goes back to the editor; a lost connection ends the edit.
        if (!(e instanceof CliError) || !e.message.startsWith('Error from server')) throw e;
        errorHeader = `${comment(`${what} was not valid:\n* ${e.message}`)}\n#\n`;
        continue;
      }
      io.out(`device.devices.kubeedge.io/${name} edited\n`);
      return 0;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `outpost edit TYPE [NAME]` with the flags commander parsed (lib/cli/main.ts). */
export const editCommand = (
  type: string,
  name: string | undefined,
  o: ConnectionFlags & { namespace: string },
): Promise<number> => runClient(o, (client) => edit(client, type, name, { namespace: o.namespace }, stdio));
