/**
 * What may be decided behind a batch in flight (takeBatch), and how a batch that did not
 * commit dooms the ones behind it (Flight).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Flight, takeBatch } from './flight.js';

interface Queued {
  readonly requestId: string;
  readonly debit?: boolean;
}
const queued = (...ids: string[]): Queued[] => ids.map((requestId) => ({ requestId }));
const ids = (batch: readonly Queued[] | null) => batch?.map((p) => p.requestId) ?? null;
const limits = (split: boolean) => ({
  maxBatch: 4,
  split,
  inTransaction: (p: Queued) => p.debit === true,
});

/** A flight whose batch is in the database, deciding `requestIds`. */
function inFlight(...requestIds: string[]): Flight<unknown> {
  const flight = new Flight<unknown>(null);
  for (const id of requestIds) flight.requestIds.add(id);
  flight.start(() => new Promise(() => undefined));
  flight.tip = { state: null, version: 1, snapshotVersion: 0, snapshotBytes: 0, persisted: true };
  flight.markSent();
  return flight;
}

void describe('takeBatch', () => {
  it('from rest takes up to maxBatch; a store that pipelines gets half of a long queue', () => {
    const many = () => queued('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i');
    const unsplit = many();
    assert.deepEqual(
      ids(takeBatch(unsplit, null, { ...limits(false), maxBatch: 16 })),
      ids(many()),
    );
    const split = many();
    assert.deepEqual(ids(takeBatch(split, null, { ...limits(true), maxBatch: 16 })), [
      'a',
      'b',
      'c',
      'd',
      'e',
    ]);
    assert.deepEqual(ids(split), ['f', 'g', 'h', 'i']);
    const short = queued('a', 'b', 'c');
    assert.deepEqual(ids(takeBatch(short, null, limits(true))), ['a', 'b', 'c']);
    assert.equal(takeBatch([], null, limits(true)), null);
  });

  it('does not split a queue with work inside the transaction', () => {
    const queue = [...queued('a', 'b', 'c', 'd', 'e', 'f', 'g'), { requestId: 'h', debit: true }];
    assert.equal(takeBatch(queue, null, { ...limits(true), maxBatch: 16 })?.length, 8);
  });

  it('behind a flight: copies of its request ids wait, in order, for its answers', () => {
    const queue = queued('x', 'a', 'y', 'b', 'z');
    assert.deepEqual(ids(takeBatch(queue, inFlight('a', 'b'), limits(true))), ['x', 'y']);
    assert.deepEqual(ids(queue), ['a', 'b', 'z']);
    const onlyCopies = queued('a', 'b');
    assert.equal(takeBatch(onlyCopies, inFlight('a', 'b'), limits(true)), null);
    assert.deepEqual(ids(onlyCopies), ['a', 'b']);
  });

  it('behind a flight: nothing with work inside the transaction, and the queue is kept as it was', () => {
    const queue = [...queued('x', 'a'), { requestId: 'd', debit: true }, ...queued('y')];
    assert.equal(takeBatch(queue, inFlight('a'), limits(true)), null);
    assert.deepEqual(ids(queue), ['x', 'a', 'd', 'y']);
  });

  it('behind a flight that failed: nothing', () => {
    const ahead = inFlight();
    ahead.fail();
    const queue = queued('x');
    assert.equal(takeBatch(queue, ahead, limits(true)), null);
    assert.deepEqual(ids(queue), ['x']);
  });
});

void describe('Flight', () => {
  it('a failed batch dooms every batch behind it, and says it did not commit', async () => {
    const first = inFlight();
    const second = new Flight<unknown>(first);
    const third = new Flight<unknown>(second);
    first.fail();
    assert.deepEqual([first.failed, second.failed, third.failed], [true, true, true]);
    assert.equal(await first.committed, false);
    assert.equal(await third.committed, false);
  });

  it('a batch that ends without committing says so; one that committed keeps it', async () => {
    const ended = new Flight<unknown>(null);
    ended.start(() => Promise.resolve());
    await ended.done;
    assert.equal(await ended.committed, false);
    assert.equal(ended.inDatabase, false);

    const committed = new Flight<unknown>(null);
    committed.start(() => {
      committed.markSent();
      committed.markCommitted();
      return Promise.resolve();
    });
    await committed.done;
    assert.equal(await committed.committed, true);
    assert.equal(committed.failed, false);
  });

  it('is in the database once sent with rows to write, until it ends', async () => {
    assert.equal(inFlight().inDatabase, true);
    const nothingDecided = new Flight<unknown>(null);
    nothingDecided.start(() => new Promise(() => undefined));
    nothingDecided.markSent();
    assert.equal(nothingDecided.inDatabase, false, 'no tip: nothing can be decided behind it');
    let finish!: () => void;
    const answered = new Flight<unknown>(null);
    answered.start(() => new Promise<void>((resolve) => (finish = resolve)));
    answered.tip = {
      state: null,
      version: 1,
      snapshotVersion: 0,
      snapshotBytes: 0,
      persisted: true,
    };
    answered.markSent();
    finish();
    await answered.done;
    assert.equal(answered.inDatabase, false);
  });

  it('waits for the batch behind it to end before deciding again', async () => {
    const first = inFlight();
    const second = new Flight<unknown>(first);
    let finish!: () => void;
    second.start(() => new Promise<void>((resolve) => (finish = resolve)));
    let ended = false;
    const waiting = first.successorEnded().then(() => (ended = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(ended, false);
    finish();
    await waiting;
    assert.equal(ended, true);
  });
});
