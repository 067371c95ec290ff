/**
 * A flood of logins must not stall the node: bcrypt runs off the event loop, a bounded number
 * at a time, so /healthz keeps answering while 200 logins at the default cost queue up.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { RoomsNode } from '../../main/node.js';
import { startTestNode } from './auth-routes.contract.js';

describe('a flood of logins', () => {
  let dir: string;
  let node: RoomsNode;
  let base: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rooms-login-flood-'));
    // The default work factor: what made 200 logins stall the event loop for seconds.
    node = await startTestNode({
      ROOMS_DB_URL: join(dir, 'rooms.sqlite'),
      ROOMS_BCRYPT_COST: '10',
    });
    base = node.httpAddress.replace('0.0.0.0', '127.0.0.1');
  });
  after(async () => {
    await node?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** One POST on its own connection: 200 of them really are concurrent (fetch would queue). */
  const post = (path: string, body: unknown) =>
    new Promise<number>((resolve, reject) => {
      const payload = JSON.stringify(body);
      const headers = {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload),
      };
      const req = request(`${base}${path}`, { method: 'POST', agent: false, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(payload);
    });

  it('keeps /healthz answering promptly during 200 concurrent logins', async () => {
    const registered = await post('/api/v1/auth/register', {
      username: 'flood',
      password: 'secret1',
    });
    assert.equal(registered, 201);

    let flooding = true;
    const floodStarted = performance.now();
    const logins = Promise.all(
      Array.from({ length: 200 }, () =>
        post('/api/v1/auth/login', { username: 'flood', password: 'secret1' }),
      ),
    ).finally(() => (flooding = false));

    const latencies: number[] = [];
    await sleep(50); // let the logins reach the server first
    while (flooding) {
      const t0 = performance.now();
      const res = await fetch(`${base}/healthz`);
      await res.arrayBuffer();
      latencies.push(performance.now() - t0);
      assert.equal(res.status, 200);
      await sleep(25);
    }
    const statuses = await logins;
    const floodMs = performance.now() - floodStarted;
    assert.deepEqual(statuses, Array<number>(200).fill(200), 'every login succeeds, queued');
    assert.ok(latencies.length >= 5, `only ${latencies.length} health checks during the flood`);
    // On the event loop a check waited behind every queued hash: about the whole flood.
    // Off it, a check waits a small part of it, however busy the machine (a ratio, not a
    // time: a fixed bound in ms failed on a loaded test machine, 572 ms in a 15 s flood).
    const worst = Math.max(...latencies);
    assert.ok(
      worst < floodMs / 5,
      `slowest /healthz ${worst.toFixed(0)} ms in a ${floodMs.toFixed(0)} ms flood`,
    );
  });
});
