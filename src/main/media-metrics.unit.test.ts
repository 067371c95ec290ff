/**
 * The media gauges' sources: a separate server's `/internal/info` is called at most once per
 * period however many gauges and scrapes ask, a failed call reports the server down (not its
 * last load), and a scrape does not wait for a call that hangs. The gauges carry the server id.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { MediaServerInfo } from '../adapters/media/http-media-orchestrator.js';
import { embeddedMediaLoad, registerMediaMetrics, remoteMediaLoad } from './media-metrics.js';

const info = (routers: number, alive = [true, true]): MediaServerInfo => ({
  workers: alive.map((a) => ({ alive: a })),
  stats: { routers, transports: routers * 2, producers: 1, consumers: 3 },
});

describe('media metrics', () => {
  it('calls /internal/info once per period, shared by concurrent scrapes', async () => {
    let nowMs = 0;
    let calls = 0;
    const load = remoteMediaLoad(
      () => {
        calls++;
        return Promise.resolve(info(calls));
      },
      { everyMs: 5_000, now: () => nowMs },
    );
    const first = await Promise.all([load(), load(), load()]);
    assert.equal(calls, 1);
    assert.deepEqual(
      first.map((i) => i?.stats.routers),
      [1, 1, 1],
    );
    nowMs = 4_999;
    assert.equal((await load())?.stats.routers, 1, 'cached within the period');
    nowMs = 5_000;
    assert.equal((await load())?.stats.routers, 2, 'called again after it');
    assert.equal(calls, 2);
  });

  it('reports no load after a failed call, and the new one once it answers again', async () => {
    let nowMs = 0;
    let failing = false;
    const load = remoteMediaLoad(
      () => (failing ? Promise.reject(new Error('ECONNREFUSED')) : Promise.resolve(info(4))),
      { everyMs: 10, now: () => nowMs },
    );
    assert.equal((await load())?.stats.routers, 4);
    failing = true;
    nowMs = 10;
    assert.equal(await load(), null);
    failing = false;
    nowMs = 20;
    assert.equal((await load())?.stats.routers, 4);
  });

  it('answers with the previous load when the call hangs, without waiting for it', async () => {
    let nowMs = 0;
    let hang = false;
    const load = remoteMediaLoad(
      () => (hang ? new Promise<MediaServerInfo>(() => undefined) : Promise.resolve(info(7))),
      { everyMs: 10, waitMs: 5, now: () => nowMs },
    );
    assert.equal((await load())?.stats.routers, 7);
    hang = true;
    nowMs = 10;
    assert.equal((await load())?.stats.routers, 7);
  });

  it('registers the gauges with the server id; a server that did not start is down with zeros', async () => {
    const registry = new Registry();
    registerMediaMetrics(registry, 'media-x', () => Promise.resolve(info(2, [true, false])));
    const text = await registry.metrics();
    for (const line of [
      'rooms_media_up{server="media-x"} 1',
      'rooms_media_workers{server="media-x"} 2',
      'rooms_media_workers_alive{server="media-x"} 1',
      'rooms_media_routers{server="media-x"} 2',
      'rooms_media_transports{server="media-x"} 4',
      'rooms_media_producers{server="media-x"} 1',
      'rooms_media_consumers{server="media-x"} 3',
    ]) {
      assert.ok(text.split('\n').includes(line), `${line} in\n${text}`);
    }
    const none = new Registry();
    registerMediaMetrics(none, 'media-y', embeddedMediaLoad(null));
    const down = await none.metrics();
    assert.ok(down.includes('rooms_media_up{server="media-y"} 0'));
    assert.ok(down.includes('rooms_media_workers_alive{server="media-y"} 0'));
  });
});
