import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  keepAliveCpuPercent,
  kibPerConnection,
  pingCpuMsPer1k,
  roomCountFor,
  roomsOf,
  userIdOf,
} from './connections-plan.js';

describe('connections plan', () => {
  it('gives each socket 1, 2 or 3 distinct rooms, about 40 followers per room', () => {
    const sockets = 10_000;
    const rooms = roomCountFor(sockets);
    assert.equal(rooms, 500);
    const followers = new Map<string, number>();
    for (let i = 0; i < sockets; i++) {
      const mine = roomsOf(i, rooms);
      assert.equal(mine.length, 1 + (i % 3));
      assert.equal(new Set(mine).size, mine.length);
      for (const room of mine) followers.set(room, (followers.get(room) ?? 0) + 1);
    }
    assert.equal(followers.size, rooms);
    const counts = [...followers.values()];
    assert.ok(Math.min(...counts) >= 30 && Math.max(...counts) <= 50, String(counts));
    assert.equal(userIdOf(0), '1');
  });

  it('takes memory per connection as the larger of RSS and heap + external growth', () => {
    const before = { rss: 100 * 2 ** 20, heapUsed: 40 * 2 ** 20, external: 2 * 2 ** 20 };
    const after = { rss: 110 * 2 ** 20, heapUsed: 60 * 2 ** 20, external: 3 * 2 ** 20 };
    const kib = kibPerConnection(before, after, 1024);
    assert.equal(kib.rss, 10);
    assert.equal(kib.heap, 21);
    assert.equal(kib.figure, 21);
  });

  it('charges the ping rounds only the CPU above the idle baseline, per 1,000 sockets', () => {
    // 15 s window, 3 s interval: 5 rounds; 1,000 ms above the baseline over 5,000 sockets.
    const options = { windowMs: 15_000, pingIntervalMs: 3_000, sockets: 5_000 };
    assert.equal(pingCpuMsPer1k({ ...options, cpuMs: 1_600, baselineCpuMs: 600 }), 40);
    assert.equal(pingCpuMsPer1k({ ...options, cpuMs: 500, baselineCpuMs: 600 }), 0);
    // 40 ms per 1k per round, 10,000 sockets every 25 s: 400 ms per 25 s = 1.6% of a core.
    assert.equal(keepAliveCpuPercent(40, 10_000, 25_000), 1.6);
  });
});
