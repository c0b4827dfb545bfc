// A List answer decoded once while the runtime keeps sending the same bytes (lib/grpc/services.ts):
// decoded again when the bytes change, frozen items, and arrays of each call's own.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sameAnswerOnce } from '#lib/grpc/services.ts';

const counting = () => {
  let decodes = 0;
  const decode = (bytes: Buffer) => {
    decodes++;
    const ids = bytes.toString().split(',');
    return { containers: ids.map((id) => ({ id, labels: { app: id } })), note: 'x' };
  };
  return { decode, count: () => decodes };
};

test('the same bytes are decoded once; other bytes again', () => {
  const c = counting();
  const decode = sameAnswerOnce(c.decode);
  const a = decode(Buffer.from('b,a')) as { containers: { id: string }[] };
  const b = decode(Buffer.from('b,a')) as { containers: { id: string }[] };
  assert.is(c.count(), 1);
  assert.equal(
    b.containers.map((x) => x.id),
    ['b', 'a'],
  );
  assert.is(a.containers[0], b.containers[0], 'the items are shared');
  const d = decode(Buffer.from('c')) as { containers: { id: string }[] };
  assert.is(c.count(), 2);
  assert.equal(
    d.containers.map((x) => x.id),
    ['c'],
  );
});

test('each call gets its own arrays (a caller may sort them); the items are frozen', () => {
  const decode = sameAnswerOnce(counting().decode);
  const a = decode(Buffer.from('b,a')) as { containers: { id: string; labels: object }[]; note: string };
  a.containers.sort((x, y) => x.id.localeCompare(y.id));
  const b = decode(Buffer.from('b,a')) as { containers: { id: string; labels: object }[] };
  assert.equal(
    b.containers.map((x) => x.id),
    ['b', 'a'],
    "one caller's sort is not another's",
  );
  assert.ok(Object.isFrozen(b.containers[0]) && Object.isFrozen(b.containers[0]!.labels));
  assert.throws(() => {
    (b.containers[0] as { id: string }).id = 'changed';
  }, TypeError);
  assert.is(a.note, 'x');
});

test('a Buffer that grpc-js reuses later does not change the remembered bytes', () => {
  const c = counting();
  const decode = sameAnswerOnce(c.decode);
  const buf = Buffer.from('a,b');
  decode(buf);
  buf.write('x,y');
  decode(Buffer.from('a,b'));
  assert.is(c.count(), 1);
});

test.run();
