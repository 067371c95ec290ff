import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errors } from '../shared/error-codes.js';
import { toOwner } from './owner-forward.js';

const key = { appCode: 'default', roomId: 'r1' };

function host() {
  const forgotten: string[] = [];
  return { forgotten, forgetRoute: (k: typeof key) => forgotten.push(k.roomId) };
}

void describe('toOwner', () => {
  void it('answers what the owner answered', async () => {
    const h = host();
    assert.equal(await toOwner(h, key, { cached: true }, () => Promise.resolve('ok'), null), 'ok');
    assert.deepEqual(h.forgotten, []);
  });

  void it('on a remembered route refused as not the owner, forgets it and runs the call again', async () => {
    const h = host();
    const answer = await toOwner(
      h,
      key,
      { cached: true },
      () => Promise.reject(errors.NOT_OWNER_NODE('node b')),
      () => Promise.resolve('again'),
    );
    assert.equal(answer, 'again');
    assert.deepEqual(h.forgotten, ['r1']);
  });

  void it('on a remembered route whose owner is out of reach (it died), forgets it and runs the call again', async () => {
    const h = host();
    const answer = await toOwner(
      h,
      key,
      { cached: true },
      () => Promise.reject(errors.OWNER_UNREACHABLE('connection refused')),
      () => Promise.resolve('again'),
    );
    assert.equal(answer, 'again');
    assert.deepEqual(h.forgotten, ['r1']);
  });

  void it('a command without a request id runs again only where nothing of it ran', async () => {
    const h = host();
    let again = 0;
    const rerun = () => (again++, Promise.resolve('again'));
    const unreachable = errors.OWNER_UNREACHABLE('the stream broke');
    // The owner may have committed it before it died: a second run would do it twice.
    await assert.rejects(
      toOwner(h, key, { cached: true }, () => Promise.reject(unreachable), rerun, true),
      { code: 'OWNER_UNREACHABLE' },
    );
    assert.equal(again, 0);
    const refused = () => Promise.reject(errors.NOT_OWNER_NODE('node b'));
    assert.equal(await toOwner(h, key, { cached: true }, refused, rerun, true), 'again');
    assert.deepEqual([h.forgotten, again], [['r1', 'r1'], 1]);
  });

  void it('a fresh route refused or out of reach, or a call out of time: forgets the route, runs nothing again', async () => {
    for (const [route, error] of [
      [{}, errors.NOT_OWNER_NODE('node b')],
      [{}, errors.OWNER_UNREACHABLE('connection refused')],
      [{ cached: true as const }, errors.OWNER_TIMEOUT('no answer in time')],
      [{ cached: true as const }, errors.DEADLINE_EXCEEDED('no answer in time')],
    ] as const) {
      const h = host();
      let again = 0;
      await assert.rejects(
        toOwner(
          h,
          key,
          route,
          () => Promise.reject(error),
          () => (again++, Promise.resolve('x')),
        ),
        { code: error.code },
      );
      assert.deepEqual([h.forgotten, again], [['r1'], 0]);
    }
  });

  void it('a call that already ran again, or any other answer: passed on, the route kept', async () => {
    const h = host();
    await assert.rejects(
      toOwner(h, key, { cached: true }, () => Promise.reject(errors.NOT_OWNER_NODE('b')), null),
      { code: 'NOT_OWNER_NODE' },
    );
    const refused = errors.DATABASE_LOCK_CONFLICT('a lock');
    await assert.rejects(
      toOwner(
        h,
        key,
        { cached: true },
        () => Promise.reject(refused),
        () => Promise.resolve(1),
      ),
      refused,
    );
    assert.deepEqual(h.forgotten, ['r1']);
  });
});
