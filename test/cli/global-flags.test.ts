// kubectl's global flags before the command: moved after it on the CLI's real command tree, and
// nothing after `--` or after the command path moves. The bundle's run is in test/e2e/cli-bundle.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GLOBAL_FLAGS, hoistGlobalFlags } from '#lib/cli/global-flags.ts';
import { cliProgram } from '#lib/cli/main.ts';

const program = cliProgram(() => {});
const hoist = (line: string) => hoistGlobalFlags(program, line.split(' ')).join(' ');

test('flags before the command go right after it', () => {
  assert.is(hoist('--kubeconfig F get pods'), 'get --kubeconfig F pods');
  assert.is(hoist('--kubeconfig F -n kube-system get pods'), 'get --kubeconfig F -n kube-system pods');
  assert.is(hoist('-n x get pods'), 'get -n x pods');
  assert.is(hoist('--server=http://h:1 -nx describe pod web'), 'describe --server=http://h:1 -nx pod web');
  assert.is(hoist('-s http://h:1 --token T version'), 'version -s http://h:1 --token T');
});

test('through a command path: ctl get, images load; between its parts too', () => {
  assert.is(hoist('-n x ctl get pods'), 'ctl get -n x pods');
  assert.is(hoist('ctl -n x get pods'), 'ctl get -n x pods');
  assert.is(hoist('-s http://h:1 images load a.tar'), 'images load -s http://h:1 a.tar');
});

test('a flag value that names a command is a value', () => {
  assert.is(hoist('-n get get pods'), 'get -n get pods');
  assert.is(hoist('--token logs logs web'), 'logs --token logs web');
});

test('nothing after the command path or after -- moves', () => {
  assert.is(hoist('get -n x pods --kubeconfig F'), 'get -n x pods --kubeconfig F');
  assert.is(hoist('-n x exec web -- ls -n y --server z'), 'exec -n x web -- ls -n y --server z');
  assert.is(hoist('exec web -- -n y'), 'exec web -- -n y');
  assert.is(hoist('serve --data-dir d --listen 127.0.0.1:1'), 'serve --data-dir d --listen 127.0.0.1:1');
  assert.is(hoist('supervise -- --data-dir d'), 'supervise -- --data-dir d');
});

test('without a command, or with another flag first, the line stays for commander to judge', () => {
  assert.is(hoist('-n x'), '-n x');
  assert.is(hoist('-n x nope pods'), '-n x nope pods');
  assert.is(hoist('--verbose -n x get pods'), '--verbose -n x get pods');
  assert.is(hoist('--kubeconfig'), '--kubeconfig');
  assert.is(hoist('--version'), '--version');
});

test('GLOBAL_FLAGS are exactly the client flags of get (its -n included)', () => {
  const get = program.commands.find((c) => c.name() === 'get')!;
  const valued = get.options
    .filter((o) => o.required && !['--selector', '--field-selector', '--output'].includes(o.long!))
    .map((o) => [o.long, o.short ?? ''].join(' '));
  assert.equal(valued.sort(), GLOBAL_FLAGS.map((f) => [f.long, f.short ?? ''].join(' ')).sort());
});

test.run();
