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

  void it('remembers a node’s address as long as a route, and forgets it with a route of it', () => {
    let now = 0;
    const cache = new RouteCache(1_000, () => now);
    cache.set('r1', { nodeId: 'b', addr: '10.0.0.2:9090' });
    cache.set('r2', { nodeId: 'b', addr: '10.0.0.2:9090' });
    cache.set('r3', { nodeId: 'c', addr: '10.0.0.3:9090' });
    now = 999;
    assert.equal(cache.addrOf('b'), '10.0.0.2:9090');
    assert.equal(cache.addrOf('nobody'), null);
    // A failed forward to b (it moved or died): b's address goes with the route.
    cache.forget('r1');
    assert.equal(cache.addrOf('b'), null);
    assert.deepEqual(cache.get('r2'), { nodeId: 'b', addr: '10.0.0.2:9090' });
    assert.equal(cache.addrOf('c'), '10.0.0.3:9090');
    now = 1_000;
    assert.equal(cache.addrOf('c'), null, 'as long as a route, no longer');
  });

  void it('holds at most 10,000 routes, dropping the oldest', () => {
    const cache = new RouteCache(60_000, () => 0);
    for (let i = 0; i <= 10_000; i++) cache.set(`r${i}`, { nodeId: 'b', addr: 'x' });
    assert.equal(cache.size, 10_000);
    assert.equal(cache.get('r0'), null);
    assert.ok(cache.get('r10000'));
  });
});
