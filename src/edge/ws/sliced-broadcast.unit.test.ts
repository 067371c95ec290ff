/**
 * A room's broadcast a slice of sockets at a time: other work runs between slices, every
 * socket gets the room's frames in order (frames that arrive meanwhile go out after), a
 * socket that stops following mid-way gets none of the rest, and a flush finishes now.
 */
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { SlicedBroadcast } from './sliced-broadcast.js';

function setup(count: number, slice = 2) {
  const members = new Set(Array.from({ length: count }, (_, i) => i));
  const got = new Map<number, string[]>();
  let sent = 0;
  const broadcast = new SlicedBroadcast<number>(
    slice,
    (c, frames) => {
      got.set(c, [...(got.get(c) ?? []), ...frames.map((f) => f.toString())]);
      return frames.length;
    },
    (n) => (sent += n),
  );
  const frames = (...names: string[]) => names.map((n) => Buffer.from(n));
  return { members, got, broadcast, frames, sent: () => sent };
}

describe('SlicedBroadcast', () => {
  it('writes a slice now and the rest on later turns, leaving room for other work', async () => {
    const { members, got, broadcast, frames, sent } = setup(5);
    broadcast.send(members, frames('a'));
    assert.deepEqual([...got.keys()], [0, 1], 'the first slice at once');
    await tick();
    assert.equal(got.size, 4);
    await tick();
    assert.deepEqual([...got.values()], [['a'], ['a'], ['a'], ['a'], ['a']]);
    assert.equal(sent(), 5);
  });

  it('keeps each socket’s order: frames arriving meanwhile go out after, to who follows then', async () => {
    const { members, got, broadcast, frames } = setup(4);
    broadcast.send(members, frames('a'));
    broadcast.send(members, frames('b', 'c'));
    members.add(9);
    members.delete(3);
    for (let i = 0; i < 6; i++) await tick();
    assert.deepEqual(got.get(0), ['a', 'b', 'c']);
    assert.deepEqual(got.get(3), undefined, 'left before its slice: nothing more');
    assert.deepEqual(got.get(9), ['b', 'c'], 'joined mid-way: the frames after');
  });

  it('a small room goes out at once; a flush finishes a broadcast now', async () => {
    const small = setup(2);
    small.broadcast.send(small.members, small.frames('x'));
    assert.equal(small.got.size, 2);
    const { members, got, broadcast, frames } = setup(7);
    broadcast.send(members, frames('a'));
    broadcast.send(members, frames('b'));
    broadcast.flush(members);
    assert.deepEqual(
      [...got.values()].map((f) => f.join('')),
      Array(7).fill('ab'),
    );
    await tick();
    await tick();
    assert.deepEqual(
      [...got.values()].map((f) => f.join('')),
      Array(7).fill('ab'),
      'nothing twice',
    );
  });
});
