import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  chooseProtocol,
  execOptions,
  execQuery,
  isSpdyUpgrade,
  isWebSocketUpgrade,
  offeredProtocols,
} from '#lib/exec/options.ts';
import { exitCodeOf, parseStatus } from '#lib/exec/status.ts';
import { assertBadRequest } from '../helpers/status.ts';

const parse = (q: Record<string, string | string[]>) => execOptions(execQuery.parse(q));

test('exec query: repeated commands, ParseBool flags, stderr merged with a TTY', () => {
  assert.equal(parse({ command: ['sh', '-c', 'ls'], stdout: 'true', stderr: '1', container: 'main' }), {
    command: ['sh', '-c', 'ls'],
    container: 'main',
    stdin: false,
    stdout: true,
    stderr: true,
    tty: false,
  });
  assert.equal(parse({ command: 'sh', stdin: 'T', stdout: 'True', stderr: 'true', tty: 'TRUE' }), {
    command: ['sh'],
    container: undefined,
    stdin: true,
    stdout: true,
    stderr: false,
    tty: true,
  });
  assert.not.ok(execQuery.safeParse({ command: 'ls', stdin: 'yes' }).success);
  assertBadRequest(
    () => parse({ stdout: 'true' }),
    'you must specify at least one command for the container',
  );
});

test('upgrade headers and the channel protocol chosen', () => {
  const h = (o: Record<string, string>) => new Headers(o);
  assert.ok(isWebSocketUpgrade(h({ connection: 'keep-alive, Upgrade', upgrade: 'WebSocket' })));
  assert.not.ok(isWebSocketUpgrade(h({ upgrade: 'websocket' })));
  assert.ok(isSpdyUpgrade(h({ connection: 'Upgrade', upgrade: 'SPDY/3.1' })));
  assert.not.ok(isSpdyUpgrade(h({ connection: 'Upgrade', upgrade: 'websocket' })));
  const offered = offeredProtocols(h({ 'sec-websocket-protocol': 'v4.channel.k8s.io, v5.channel.k8s.io' }));
  assert.equal(offered, ['v4.channel.k8s.io', 'v5.channel.k8s.io']);
  assert.is(chooseProtocol(offered), 'v5.channel.k8s.io');
  assert.is(chooseProtocol(['v4.channel.k8s.io', 'channel.k8s.io']), 'v4.channel.k8s.io');
  assert.is(chooseProtocol(['base64.channel.k8s.io']), undefined);
});

test('status frames: success, a non-zero exit code, other failures', () => {
  assert.is(exitCodeOf(parseStatus(Buffer.from('{"metadata":{},"status":"Success"}'))), 0);
  const three =
    '{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}';
  assert.is(exitCodeOf(parseStatus(Buffer.from(three))), 3);
  assert.is(exitCodeOf(parseStatus(Buffer.from('{"status":"Failure","reason":"InternalError"}'))), undefined);
  assert.equal(parseStatus(Buffer.from('not json')), { status: 'Failure', message: 'not json' });
});

test.run();
