/**
 * Two real workers with a WebRtcServer each: routers go to the least loaded worker, each
 * worker's transports share its one port; a worker killed with SIGKILL has its routers
 * reported lost, new routers land on the surviving worker, and the dead one is replaced
 * (with its WebRtcServer on the same port).
 */
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { MediaEvent } from './events.js';
import type { MediaServer } from './server.js';
import { call, mediaSkipReason, startTestMediaServer, waitFor } from './testing/harness.js';

interface RouterData {
  router_id: string;
  worker_index: number;
  worker_pid: number;
}
interface InfoData {
  stats: { routers: number };
  workers: { index: number; pid: number; alive: boolean; routers: number }[];
}

/** True when `port` is free for UDP and TCP on 127.0.0.1. */
async function free(port: number): Promise<boolean> {
  const tcp = net.createServer();
  const udp = dgram.createSocket('udp4');
  const ok = await new Promise<boolean>((resolve) => {
    tcp.once('error', () => resolve(false));
    udp.once('error', () => resolve(false));
    tcp.listen(port, '127.0.0.1', () => udp.bind(port, '127.0.0.1', () => resolve(true)));
  });
  tcp.close();
  try {
    udp.close();
  } catch {
    /* never bound */
  }
  return ok;
}

/** A base port P with P and P+1 free for UDP and TCP. */
async function twoFreePorts(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 9_000) * 2;
    if ((await free(base)) && (await free(base + 1))) return base;
  }
  throw new Error('no two consecutive free ports');
}

void describe('worker pool', { skip: mediaSkipReason() }, () => {
  let server: MediaServer;
  let base: number;
  const events: MediaEvent[] = [];

  before(async () => {
    base = await twoFreePorts();
    // A slow restart leaves a window in which only the surviving worker can take routers.
    server = await startTestMediaServer({
      workers: 2,
      workerRestartDelaysMs: [1_500],
      webRtcServerPort: base,
    });
    server.events.subscribe((e) => events.push(e));
  });
  after(async () => {
    await server?.close();
  });

  const create = async (code: string) => {
    const r = await call<RouterData>(server, 'POST', '/internal/v1/routers', { room_code: code });
    assert.ok(r.status === 201 || r.status === 200, JSON.stringify(r.body));
    return r.body.data;
  };
  const info = async () => (await call<InfoData>(server, 'GET', '/internal/info')).body.data;
  /** The ports in a new transport's ICE candidates (UDP and TCP). */
  const candidatePorts = async (routerId: string) => {
    const r = await call<{ iceCandidates: { port: number; protocol: string }[] }>(
      server,
      'POST',
      '/internal/v1/transports',
      { router_id: routerId, direction: 'send' },
    );
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return [...new Set(r.body.data.iceCandidates.map((c) => `${c.protocol}:${c.port}`))].sort();
  };

  void it('places each router on the least loaded worker', async () => {
    const routers = [];
    for (const code of ['pool-a', 'pool-b', 'pool-c', 'pool-d']) routers.push(await create(code));
    assert.deepEqual(
      routers.map((r) => r.worker_index),
      [0, 1, 0, 1],
    );
    const { workers, stats } = await info();
    assert.deepEqual(
      workers.map((w) => w.routers),
      [2, 2],
    );
    assert.equal(stats.routers, 4);
    // Every transport of a worker listens on that worker's WebRtcServer port.
    for (const r of routers) {
      const port = base + r.worker_index;
      assert.deepEqual(await candidatePorts(r.router_id), [`tcp:${port}`, `udp:${port}`]);
    }
    // Freeing a router on worker 1 makes it the least loaded one.
    await call(server, 'POST', `/internal/v1/routers/${routers[1]!.router_id}/close`);
    assert.equal((await create('pool-e')).worker_index, 1);
  });

  void it('reports the routers of a killed worker and places new routers on the others', async () => {
    const before = await info();
    const victim = before.workers[0]!;
    const survivor = before.workers[1]!;
    const lostIds = (
      await Promise.all(
        ['pool-a', 'pool-c'].map(async (code) => {
          const r = await call<RouterData>(server, 'GET', `/internal/v1/rooms/${code}/router`);
          return r.body.data;
        }),
      )
    ).map((r) => {
      assert.equal(r.worker_pid, victim.pid);
      return r.router_id;
    });

    process.kill(victim.pid, 'SIGKILL');
    const lost = await waitFor(() => events.find((e) => e.type === 'routers_lost'), 'routers_lost');
    assert.ok(lost.type === 'routers_lost');
    assert.equal(lost.worker_pid, victim.pid);
    assert.equal(lost.worker_index, 0);
    assert.deepEqual(lost.routers.map((r) => r.room_code).sort(), ['pool-a', 'pool-c']);
    assert.deepEqual(lost.routers.map((r) => r.router_id).sort(), lostIds.sort());

    const during = await info();
    assert.equal(during.stats.routers, before.stats.routers - 2);
    assert.deepEqual(
      during.workers.map((w) => w.alive),
      [false, true],
    );
    const health = await fetch(`${server.url}/healthz`);
    assert.equal(((await health.json()) as { status: string }).status, 'degraded');
    for (const id of lostIds) {
      assert.equal((await call(server, 'GET', `/internal/v1/routers/${id}`)).status, 404);
    }

    // While worker 0 is down, every router goes to the survivor, a lost room's included.
    for (const code of ['pool-a', 'pool-f']) {
      const r = await create(code);
      assert.equal(r.worker_pid, survivor.pid, code);
      assert.ok(!lostIds.includes(r.router_id));
    }

    const restarted = await waitFor(
      () => events.find((e) => e.type === 'worker_restarted'),
      'worker_restarted',
    );
    assert.ok(restarted.type === 'worker_restarted');
    assert.equal(restarted.worker_index, 0);
    assert.notEqual(restarted.worker_pid, victim.pid);
    // The fresh worker is the least loaded one now.
    const next = await create('pool-g');
    assert.deepEqual([next.worker_index, next.worker_pid], [0, restarted.worker_pid]);
    assert.deepEqual(await candidatePorts(next.router_id), [`tcp:${base}`, `udp:${base}`]);
    assert.equal(
      ((await (await fetch(`${server.url}/healthz`)).json()) as { status: string }).status,
      'ok',
    );
  });
});
