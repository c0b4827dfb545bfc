import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { humanDuration, parseTimestamp, translateTimestampSince } from '#lib/kube/duration.ts';

const s = (n: number) => n * 1000;
const m = (n: number) => s(n * 60);
const h = (n: number) => m(n * 60);
const d = (n: number) => h(n * 24);

test('more than a second of clock skew into the future is <invalid>', () => {
  assert.is(humanDuration(s(-2)), '<invalid>');
  assert.is(humanDuration(-3600_000), '<invalid>');
  assert.is(humanDuration(Number.NaN), '<invalid>');
});

test('up to two seconds of skew reads as 0s (Go truncates toward zero)', () => {
  assert.is(humanDuration(-1999), '0s');
  assert.is(humanDuration(s(-1)), '0s');
  assert.is(humanDuration(-500), '0s');
  assert.is(humanDuration(0), '0s');
});

test('seconds up to two minutes', () => {
  assert.is(humanDuration(999), '0s');
  assert.is(humanDuration(s(59)), '59s');
  assert.is(humanDuration(s(119)), '119s');
});

test('minutes and seconds below ten minutes', () => {
  assert.is(humanDuration(s(120)), '2m');
  assert.is(humanDuration(m(5) + s(2)), '5m2s');
  assert.is(humanDuration(m(9) + s(59) + 999), '9m59s');
});

test('whole minutes below three hours', () => {
  assert.is(humanDuration(m(10)), '10m');
  assert.is(humanDuration(m(10) + s(30)), '10m');
  assert.is(humanDuration(h(1)), '60m');
  assert.is(humanDuration(m(179) + s(59)), '179m');
});

test('hours and minutes below eight hours', () => {
  assert.is(humanDuration(h(3)), '3h');
  assert.is(humanDuration(h(3) + m(5)), '3h5m');
  assert.is(humanDuration(h(7) + m(59)), '7h59m');
});

test('whole hours below two days', () => {
  assert.is(humanDuration(h(8)), '8h');
  assert.is(humanDuration(h(47) + m(59)), '47h');
});

test('days and hours below eight days', () => {
  assert.is(humanDuration(d(2)), '2d');
  assert.is(humanDuration(d(3)), '3d');
  assert.is(humanDuration(d(3) + h(5)), '3d5h');
  assert.is(humanDuration(d(7) + h(23)), '7d23h');
});

test('whole days below two years', () => {
  assert.is(humanDuration(d(8)), '8d');
  assert.is(humanDuration(d(400) + h(23)), '400d');
  assert.is(humanDuration(d(729)), '729d');
});

test('years and days below eight years', () => {
  assert.is(humanDuration(d(730)), '2y');
  assert.is(humanDuration(d(745)), '2y15d');
  assert.is(humanDuration(d(365 * 8 - 1)), '7y364d');
});

test('whole years from eight years on', () => {
  assert.is(humanDuration(d(365 * 8)), '8y');
  assert.is(humanDuration(d(365 * 10 + 200)), '10y');
});

const NOW = Date.parse('2025-03-01T12:00:00Z');

test('translateTimestampSince ages an RFC 3339 timestamp against an injected now', () => {
  assert.is(translateTimestampSince('2025-03-01T11:54:58Z', NOW), '5m2s');
  assert.is(translateTimestampSince('2025-02-26T12:00:00Z', NOW), '3d');
  assert.is(translateTimestampSince('2025-03-01T13:00:00+02:00', NOW), '60m');
  assert.is(translateTimestampSince('2025-03-01T11:59:00.123456Z', NOW), '59s');
  assert.is(translateTimestampSince('2025-03-01T12:00:05Z', NOW), '<invalid>');
});

test('translateTimestampSince says <unknown> when the timestamp is missing', () => {
  assert.is(translateTimestampSince(undefined, NOW), '<unknown>');
  assert.is(translateTimestampSince(null, NOW), '<unknown>');
  assert.is(translateTimestampSince('', NOW), '<unknown>');
  assert.is(translateTimestampSince('0001-01-01T00:00:00Z', NOW), '<unknown>');
  assert.is(translateTimestampSince('yesterday', NOW), '<unknown>');
});

test('parseTimestamp returns epoch milliseconds or undefined', () => {
  assert.is(parseTimestamp('2025-03-01T12:00:00Z'), NOW);
  assert.is(parseTimestamp(undefined), undefined);
});

test.run();
