import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { invalid, notFound } from '#lib/kube/status.ts';

test('notFound names the object the way kubectl prints it', () => {
  const s = notFound('pods', 'web').toStatus();
  assert.equal(s.message, 'pods "web" not found');
  assert.equal(s.code, 404);
  assert.equal(s.reason, 'NotFound');
  assert.equal(s.details, { name: 'web', kind: 'pods' });
});

test('invalid lists its causes', () => {
  const s = invalid('Pod', 'x', [{ field: 'spec.containers', message: 'Required value' }]).toStatus();
  assert.equal(s.code, 422);
  assert.match(s.message, 'spec.containers: Required value');
});

test.run();
