import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RouteCache } from './route-cache.js';

void describe('RouteCache', () => {
  void it('answers a route until its time is up, and not after', () => {
    let now = 0;
    const cache = new RouteCache(1_000, () => now);
    cache.set('r', { nodeId: 'b', addr: '10.0.0.2:9090' });
    now = 999;
    assert.deepEqual(cache.get('r'), { nodeId: 'b', addr: '10.0.0.2:9090' });
    now = 1_000;
    assert.equal(cache.get('r'), null);
    assert.equal(cache.size, 0);
  });

  void it('forgets on demand; a TTL of 0 keeps nothing', () => {
    const cache = new RouteCache(1_000, () => 0);
    cache.set('r', { nodeId: 'b', addr: 'x' });
    cache.forget('r');
    assert.equal(cache.get('r'), null);
    const none = new RouteCache(0, () => 0);
    none.set('r', { nodeId: 'b', addr: 'x' });
    assert.equal(none.get('r'), null);
  });

  void it('holds at most 10,000 routes, dropping the oldest', () => {
    const cache = new RouteCache(60_000, () => 0);
    for (let i = 0; i <= 10_000; i++) cache.set(`r${i}`, { nodeId: 'b', addr: 'x' });
    assert.equal(cache.size, 10_000);
    assert.equal(cache.get('r0'), null);
    assert.ok(cache.get('r10000'));
  });
});
