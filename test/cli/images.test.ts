import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { imageSize, imagesTable } from '#lib/cli/images.ts';

const item = (repoTags: string[], usedBy: string[] = [], pinned = false) => ({
  id: 'sha256:e7db4ce06cf06b72a071f49579870ac277f442d989b134ff7b7c4d5f729c1392',
  repoTags,
  repoDigests: [],
  size: 2_130_643,
  pinned,
  usedBy,
});

test('sizes as crictl prints them: decimal units, three digits', () => {
  assert.is(imageSize(686_813), '687kB');
  assert.is(imageSize(2_130_643), '2.13MB');
  assert.is(imageSize(512), '512B');
  assert.is(imageSize(1_500_000_000), '1.5GB');
});

test('one row per tag; a registry port is not a tag; untagged images get <none>', () => {
  const out = imagesTable([
    item(
      ['127.0.0.1:1/app/busybox:latest', 'outpost.local/busybox:latest'],
      ['default/ticker', 'edge/web'],
      true,
    ),
    item([]),
  ]);
  assert.is(
    out,
    'REPOSITORY                TAG      IMAGE ID        SIZE     PINNED   USED-BY\n' +
      '127.0.0.1:1/app/busybox   latest   e7db4ce06cf06   2.13MB   true     default/ticker,edge/web\n' +
      'outpost.local/busybox     latest   e7db4ce06cf06   2.13MB   true     default/ticker,edge/web\n' +
      '<none>                    <none>   e7db4ce06cf06   2.13MB   false    <none>\n',
  );
  assert.not.match(imagesTable([item(['localhost:5000/app'])], true), /REPOSITORY/);
  assert.match(imagesTable([item(['localhost:5000/app'])], true), /^localhost:5000\/app\s+<none>\s/);
});

// Item "images used by pods are never collected": Outpost has no image GC, and cannot remove an
// image at all: RemoveImage is not in its CRI subset (proto/cri/api.proto). containerd itself only
// collects content and snapshots no image record, container or lease references (its metadata GC);
// an image record goes only on an explicit delete. See docs/operations.md#offline-images.
test('Outpost never removes images: RemoveImage is not in its CRI proto subset', () => {
  const proto = readFileSync(join(import.meta.dirname, '../../proto/cri/api.proto'), 'utf8');
  assert.match(proto, /service ImageService/);
  assert.not.match(proto, /rpc RemoveImage/);
});

test.run();
