/**
 * One socket's burst of 10,000 frames against a whole node (voice rooms on SQLite): the
 * socket is closed with 4029 and counted, and /healthz keeps answering meanwhile.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { RoomsNode } from '../../main/node.js';
import { client, startTestNode } from '../http/auth-routes.contract.js';
import { TestClient } from './testing/ws-client.js';

describe('a WebSocket frame flood against a node', () => {
  let dir: string;
  let node: RoomsNode;
  let base: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rooms-ws-flood-'));
    node = await startTestNode({ ROOMS_DB_URL: join(dir, 'rooms.sqlite') });
    base = node.httpAddress.replace('0.0.0.0', '127.0.0.1');
  });
  after(async () => {
    await node?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('closes the flooding socket with 4029 and keeps /healthz prompt', async () => {
    const { token } = await client(node).signUp('flooder');
    const ws = await TestClient.connect(
      `${base.replace('http', 'ws')}/ws?token=${encodeURIComponent(token)}`,
    );
    assert.equal(ws.closed, null);
    // Every frame asks for a different room: each one handled costs a room lookup.
    for (let i = 0; i < 10_000; i++) {
      ws.ws.send(
        JSON.stringify({ event: 'room.subscribe', seq: i + 1, data: { room_id: `flood-${i}` } }),
      );
    }
    const latencies: number[] = [];
    while (!ws.closed && latencies.length < 200) {
      const t0 = performance.now();
      const res = await fetch(`${base}/healthz`);
      await res.arrayBuffer();
      latencies.push(performance.now() - t0);
      await sleep(10);
    }
    const closed = await ws.waitClosed(10_000);
    assert.equal(closed.code, 4029);
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      assert.equal((await fetch(`${base}/healthz`)).status, 200);
      latencies.push(performance.now() - t0);
    }
    // Generous bound: handling the 10,000 frames stalled the node for seconds.
    const worst = Math.max(...latencies);
    assert.ok(worst < 1_000, `slowest /healthz: ${worst.toFixed(0)} ms`);
    assert.ok(ws.events('room.subscribe.ack').length <= 100, 'more than the burst was handled');
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /rooms_ws_closed_total\{reason="rate_limited"\} 1/);
  });
});
