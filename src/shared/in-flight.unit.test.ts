import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InFlight } from './in-flight.js';

void describe('InFlight', () => {
  void it('drains work started before and during the drain; failures go to the handler', async () => {
    const inFlight = new InFlight();
    const done: string[] = [];
    const errors: unknown[] = [];
    const later = (ms: number, what: string) =>
      new Promise<void>((resolve) => setTimeout(resolve, ms)).then(() => void done.push(what));
    inFlight.track(
      later(10, 'first').then(() => inFlight.track(later(10, 'second'), (e) => errors.push(e))),
      (e) => errors.push(e),
    );
    inFlight.track(Promise.reject(new Error('boom')), (e) => errors.push(e));
    await inFlight.drain();
    assert.deepEqual(done, ['first', 'second']);
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /boom/);
  });
});
