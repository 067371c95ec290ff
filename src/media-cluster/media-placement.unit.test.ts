/** Placement on the least loaded live media server; draining ones take no new room. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  leastLoaded,
  withOneMoreRouter,
  type MediaServerLoad,
  type MediaServerRecord,
} from './media-placement.js';

const idle: MediaServerLoad = {
  routers: 0,
  transports: 0,
  producers: 0,
  consumers: 0,
  worker_cpu: [0],
};

function server(id: string, load: Partial<MediaServerLoad> = {}, draining = false) {
  return {
    id,
    url: `http://${id}:7070`,
    boot: `${id}-boot`,
    load: { ...idle, ...load },
    draining,
    at_ms: 0,
  } satisfies MediaServerRecord;
}

void describe('leastLoaded', () => {
  void it('picks the server with the fewest routers, then the fewest transports and consumers', () => {
    assert.equal(leastLoaded([server('a', { routers: 3 }), server('b', { routers: 1 })])?.id, 'b');
    assert.equal(
      leastLoaded([
        server('a', { routers: 2, transports: 8, consumers: 12 }),
        server('b', { routers: 2, transports: 4, consumers: 4 }),
      ])?.id,
      'b',
    );
  });

  void it('lets CPU decide first, in steps of 10 %, so jitter does not', () => {
    const busy = server('a', { routers: 0, worker_cpu: [0.9, 0.7] });
    const calm = server('b', { routers: 5, worker_cpu: [0.05, 0.05] });
    assert.equal(leastLoaded([busy, calm])?.id, 'b');
    const jitter = server('c', { routers: 1, worker_cpu: [0.04] });
    assert.equal(leastLoaded([jitter, server('d', { routers: 2, worker_cpu: [0.01] })])?.id, 'c');
  });

  void it('skips draining servers, and has no answer when every server drains', () => {
    const drained = server('a', {}, true);
    assert.equal(leastLoaded([drained, server('b', { routers: 40 })])?.id, 'b');
    assert.equal(leastLoaded([drained]), null);
    assert.equal(leastLoaded([]), null);
  });

  void it('breaks ties by id, so every node picks alike from one snapshot', () => {
    assert.equal(leastLoaded([server('m2'), server('m1'), server('m3')])?.id, 'm1');
  });

  void it('spreads a burst once each placement is counted', () => {
    let live = [server('a'), server('b')];
    const placed: string[] = [];
    for (let i = 0; i < 4; i++) {
      const best = leastLoaded(live)!;
      placed.push(best.id);
      live = live.map((s) => (s.id === best.id ? withOneMoreRouter(s) : s));
    }
    assert.deepEqual(placed, ['a', 'b', 'a', 'b']);
  });
});
