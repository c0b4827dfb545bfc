import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseGoDuration } from '#lib/cli/logs.ts';

test('parseGoDuration reads what kubectl --since reads, with Go’s messages', () => {
  assert.is(parseGoDuration('5m'), 300_000);
  assert.is(parseGoDuration('1h30m'), 5_400_000);
  assert.is(parseGoDuration('1.5s'), 1500);
  assert.is(parseGoDuration('250ms'), 250);
  assert.is(parseGoDuration('0'), 0);
  assert.is(parseGoDuration('-2s'), -2000);
  const message = (s: string) => {
    try {
      parseGoDuration(s);
    } catch (e) {
      return (e as Error).message;
    }
    return '';
  };
  assert.is(message('abc'), 'time: invalid duration "abc"');
  assert.is(message('5'), 'time: missing unit in duration "5"');
  assert.is(message('5x'), 'time: unknown unit "x" in duration "5x"');
  assert.is(message(''), 'time: invalid duration ""');
});

test.run();
