import * as assert from 'uvu/assert';
import { isStatusError } from '#lib/kube/status.ts';

/** Asserts that `fn` throws a Status error with this code and exactly this message. */
export function assertStatus(fn: () => unknown, code: number, message: string): void {
  try {
    fn();
  } catch (e) {
    if (!isStatusError(e)) throw e;
    const s = e.toStatus();
    assert.is(s.code, code);
    assert.is(s.message, message);
    return;
  }
  assert.unreachable(`expected a ${code} Status: ${message}`);
}

/** Asserts that `fn` throws a 400 BadRequest Status carrying exactly `message`. */
export function assertBadRequest(fn: () => unknown, message: string): void {
  assertStatus(fn, 400, message);
}
