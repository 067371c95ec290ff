import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { FrameCoalescer } from './frame-coalescer.js';

const frame = (text: string) => Buffer.from(text);

void describe('FrameCoalescer', () => {
  void it('sends a first frame at the end of the turn, with the frames queued in that turn', async () => {
    const flushed: [string, string[]][] = [];
    const c = new FrameCoalescer<string>(60_000, (to, frames) =>
      flushed.push([to, frames.map(String)]),
    );
    c.queue('room-a', frame('1'));
    c.queue('room-b', frame('x'));
    c.queue('room-a', frame('2'));
    assert.deepEqual(flushed, [], 'nothing leaves before the end of the turn');
    await nextTurn();
    assert.deepEqual(flushed, [
      ['room-a', ['1', '2']],
      ['room-b', ['x']],
    ]);
  });

  void it('holds frames of later turns until the window since the last flush has passed', async () => {
    const flushed: string[][] = [];
    const c = new FrameCoalescer<string>(60_000, (_, frames) => flushed.push(frames.map(String)));
    c.queue('room', frame('1'));
    await nextTurn();
    c.queue('room', frame('2'));
    await nextTurn();
    c.queue('room', frame('3'));
    await nextTurn();
    assert.deepEqual(flushed, [['1']], 'the window holds 2 and 3');
    assert.ok(c.has('room'));
    c.flushAll(); // e.g. before a room's follows end
    assert.deepEqual(flushed, [['1'], ['2', '3']]);
    assert.ok(!c.has('room'));
  });

  void it('with no window, every turn flushes on its own', async () => {
    const flushed: string[][] = [];
    const c = new FrameCoalescer<string>(0, (_, frames) => flushed.push(frames.map(String)));
    c.queue('room', frame('1'));
    await nextTurn();
    c.queue('room', frame('2'));
    await nextTurn();
    assert.deepEqual(flushed, [['1'], ['2']]);
  });
});
