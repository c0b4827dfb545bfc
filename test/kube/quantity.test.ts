import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  isZeroQuantity,
  parseQuantity,
  QUANTITY_FORMAT_MESSAGE,
  quantityMilliValue,
  quantityToNumber,
  quantityValue,
} from '#lib/kube/quantity.ts';

const milli = (s: string | number) => quantityMilliValue(parseQuantity(s));
const value = (s: string | number) => quantityValue(parseQuantity(s));

test('millicores and fractions of a core', () => {
  assert.is(milli('100m'), 100);
  assert.is(milli('0.5'), 500);
  assert.is(milli('.25'), 250);
  assert.is(milli('2'), 2000);
  assert.is(milli('2.'), 2000);
  assert.is(milli('1500m'), 1500);
});

test('plain numbers from YAML are accepted', () => {
  assert.is(milli(0.5), 500);
  assert.is(milli(2), 2000);
  assert.is(value(1e21), 1e21);
});

test('binary suffixes are powers of 1024', () => {
  assert.is(value('1Ki'), 1024);
  assert.is(value('128Mi'), 134_217_728);
  assert.is(value('1.5Gi'), 1_610_612_736);
  assert.is(value('2Ti'), 2 * 1024 ** 4);
  assert.is(value('1Pi'), 1024 ** 5);
  assert.is(parseQuantity('1Ei').num, 2n ** 60n);
});

test('decimal suffixes are powers of 1000, and E alone is exa', () => {
  assert.is(value('1k'), 1000);
  assert.is(value('1M'), 1e6);
  assert.is(value('1G'), 1e9);
  assert.is(value('3T'), 3e12);
  assert.is(value('1P'), 1e15);
  assert.is(parseQuantity('1E').num, 10n ** 18n);
});

test('decimal exponents', () => {
  assert.is(value('1e3'), 1000);
  assert.is(value('1E3'), 1000);
  assert.is(value('1e+3'), 1000);
  assert.is(milli('5e-1'), 500);
  assert.is(milli('1.5e-3'), 2); // 1.5 millis round up
});

test('nano and micro round up to whole units and millis', () => {
  assert.is(value('1n'), 1);
  assert.is(milli('1n'), 1);
  assert.is(milli('1500u'), 2);
  assert.is(value('0'), 0);
  assert.ok(isZeroQuantity(parseQuantity('0Mi')));
  assert.not.ok(isZeroQuantity(parseQuantity('1n')));
});

test('Value and MilliValue round up like apimachinery', () => {
  assert.is(value('100m'), 1);
  assert.is(value('1001m'), 2);
  assert.is(value('2000m'), 2);
  assert.is(value('-100m'), 0);
  assert.is(milli('-100m'), -100);
  assert.is(milli('+1'), 1000);
});

test('equal amounts in different spellings are the same exact fraction', () => {
  const a = parseQuantity('0.1');
  assert.equal(a, parseQuantity('100m'));
  assert.equal(a, parseQuantity('1e-1'));
  assert.equal(a, { num: 1n, den: 10n });
  assert.is(quantityToNumber(parseQuantity('1.5Ki')), 1536);
});

test('malformed quantities are rejected in the API server words', () => {
  for (const bad of [
    '',
    'abc',
    '1.2.3',
    '1Mb',
    '1e',
    ' 1',
    '1 ',
    '--1',
    'm',
    '1mi',
    '0x10',
    '1e3.5',
    'Infinity',
  ]) {
    assert.throws(
      () => parseQuantity(bad),
      (e: Error) => e.message === QUANTITY_FORMAT_MESSAGE,
      bad,
    );
  }
  assert.throws(
    () => parseQuantity(Number.NaN),
    (e: Error) => e.message === QUANTITY_FORMAT_MESSAGE,
  );
});

test('absurd exponents are refused instead of allocating huge integers', () => {
  assert.throws(() => parseQuantity('1e999999'), /out of range/);
  assert.throws(() => parseQuantity('1e-999999'), /out of range/);
});

test.run();
