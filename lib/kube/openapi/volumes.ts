// Volume schemas (core/v1): the sources Outpost mounts and volume mounts.

import { keyRef, keyToPath, r, V1 } from './core-ref.ts';
import { bool, int, list, obj, quantity, type Schema, str } from './schema.ts';

/** Volume, VolumeMount and the schemas they refer to. */
export function volumeSchemas(): Record<string, Schema> {
  const mode = int('File mode bits of the created files (default 0644).');
  return {
    [`${V1}Volume`]: obj(
      'A named volume; exactly one source is set.',
      {
        name: str('Unique within the pod; containers mount it by this name.'),
        hostPath: obj('A file or directory of the node.', {
          path: str('Path on the node.'),
          type: str('What the path must be ("" checks nothing).', [
            '',
            'DirectoryOrCreate',
            'Directory',
            'FileOrCreate',
            'File',
            'Socket',
            'CharDevice',
            'BlockDevice',
          ]),
        }),
        emptyDir: obj('A directory that lives as long as the pod.', {
          medium: str('"" (the data directory) or "Memory" (tmpfs).'),
          sizeLimit: quantity('Size limit of the volume.'),
        }),
        configMap: obj("A ConfigMap's keys as files, refreshed when the ConfigMap changes.", {
          name: str('Name of the ConfigMap.'),
          items: keyToPath,
          defaultMode: mode,
          optional: bool('Whether the ConfigMap may be missing.'),
        }),
        secret: obj("A Secret's keys as files, refreshed when the Secret changes.", {
          secretName: str('Name of the Secret.'),
          items: keyToPath,
          defaultMode: mode,
          optional: bool('Whether the Secret may be missing.'),
        }),
        downwardAPI: obj("The pod's own fields as files.", {
          items: list(r('DownwardAPIVolumeFile'), 'Files to create.'),
          defaultMode: mode,
        }),
        projected: obj('Several sources in one directory.', {
          sources: list(
            obj('One projected source.', {
              configMap: keyRef('ConfigMap'),
              secret: keyRef('Secret'),
              downwardAPI: obj("The pod's own fields.", {
                items: list(r('DownwardAPIVolumeFile'), 'Files.'),
              }),
            }),
            'The sources.',
          ),
          defaultMode: mode,
        }),
      },
      ['name'],
    ),
    [`${V1}KeyToPath`]: obj(
      'One key projected to a file.',
      { key: str('The key.'), path: str('Relative file path.'), mode: int('File mode bits.') },
      ['key', 'path'],
    ),
    [`${V1}DownwardAPIVolumeFile`]: obj(
      'A file holding a field of the pod.',
      {
        path: str('Relative file path.'),
        fieldRef: r('ObjectFieldSelector', 'A field of the pod: metadata.name, metadata.labels, ...'),
        resourceFieldRef: r('ResourceFieldSelector', "A container's limit or request."),
        mode: int('File mode bits.'),
      },
      ['path'],
    ),
    [`${V1}VolumeMount`]: obj(
      'A volume mounted into a container.',
      {
        name: str('Name of the pod volume.'),
        mountPath: str('Path inside the container.'),
        readOnly: bool('Mount read-only.'),
        subPath: str('Mount this path of the volume instead of its root.'),
      },
      ['name', 'mountPath'],
    ),
  };
}
