// Every shell block in README.md and docs/*.md is tagged runnable or not-runnable (with a reason),
// as docs/writing-docs.md asks; the runnable ones are executed by test/e2e/docs.test.ts.
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { commands, projectBlocks, shellBlocks, splitComment } from '../helpers/doc-blocks.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('every shell block in the docs is tagged', () => {
  const bad = projectBlocks(root)
    .filter((b) => b.problem)
    .map((b) => `${b.file}:${b.line}: ${b.problem} (see docs/writing-docs.md)`);
  assert.equal(bad, []);
});

test('the docs have runnable blocks', () => {
  assert.ok(projectBlocks(root).filter((b) => b.tag === 'runnable').length > 0);
});

test('tags, continuations, skips and expectations are parsed', () => {
  const md = [
    '```sh runnable',
    'export KS="--server x"',
    'kubectl $KS get pod missing   # => exit 1: Error from server (NotFound) … "missing"',
    "curl -s 'a#b' \\",
    '  -d x          # skip: streams',
    'echo hi',
    '# => hi',
    '```',
    '```bash not-runnable: needs a cluster',
    'kubeadm init',
    '```',
    '```sh',
    'ls',
    '```',
    '```sh not-runnable',
    '```',
    '```json',
    '{}',
    '```',
  ].join('\n');
  const blocks = shellBlocks('x.md', md);
  assert.equal(
    blocks.map((b) => [b.line, b.tag, b.reason, b.problem]),
    [
      [1, 'runnable', undefined, undefined],
      [9, 'not-runnable', 'needs a cluster', undefined],
      [12, undefined, undefined, 'untagged'],
      [15, undefined, undefined, 'not-runnable without a reason'],
    ],
  );
  const cmds = commands(blocks[0]!);
  assert.equal(
    cmds.map((c) => [c.line, c.text, c.exit, c.contains, c.skip]),
    [
      [2, 'export KS="--server x"', 0, [], undefined],
      [3, 'kubectl $KS get pod missing', 1, ['Error from server (NotFound)', '"missing"'], undefined],
      [4, "curl -s 'a#b'  -d x", 0, [], 'streams'],
      [6, 'echo hi', 0, ['hi'], undefined],
    ],
  );
});

test('a # inside quotes or a word is not a comment', () => {
  assert.equal(splitComment(`jq -r '.a # b' x#y # c`), { code: `jq -r '.a # b' x#y `, comment: 'c' });
});

test.run();
