/**
 * A room's audience over several routers, on real mediasoup workers: with the consumer
 * budget forced to 3, listeners fill the origin, then a first and a second edge router;
 * every listener receives the seat's RTP through the pipes; a producer made after the
 * edges opened reaches them too; closing a producer on the origin closes its consumers on
 * every router; listeners leaving close their edges after the linger; and a worker killed
 * with SIGKILL under an edge takes only that edge's listeners with it (reported in
 * `routers_lost` with role `edge` and their peer ids), while the others keep receiving.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { MediaEvent } from './events.js';
import type { MediaServer } from './server.js';
import { call, mediaSkipReason, room, startTestMediaServer, waitFor } from './testing/harness.js';
import type { RtpSender } from './testing/plain-rtp.js';
import { opusLevelRtpParameters, PlainListener, plainSeat } from './testing/plain-rtp.js';

interface RoomRouter {
  router_id: string;
  role: 'origin' | 'edge';
  worker_index: number;
  worker_pid: number;
  transports: number;
  load: number;
}

const BUDGET = 3;

void describe('a room audience over origin and edge routers', { skip: mediaSkipReason() }, () => {
  let server: MediaServer;
  let events: MediaEvent[];
  let code: string;
  const listeners: PlainListener[] = [];
  const senders: RtpSender[] = [];

  beforeEach(async () => {
    server = await startTestMediaServer({
      workers: 2,
      routerConsumers: BUDGET,
      edgeLingerMs: 300,
      workerRestartDelaysMs: [60_000],
    });
    events = [];
    server.events.subscribe((event) => events.push(event));
    code = room();
    await server.registry.ensureRouter(code);
  });

  afterEach(async () => {
    for (const s of senders.splice(0)) s.close();
    for (const l of listeners.splice(0)) l.leave();
    await server.close();
  });

  /** A seat on the origin, its sender closed after the test. */
  async function seat(peer: string, ssrc: number) {
    const made = await plainSeat(server, code, peer, ssrc);
    senders.push(made.sender);
    return made;
  }

  async function join(count: number, producers: string[]): Promise<PlainListener[]> {
    const joined: PlainListener[] = [];
    for (let i = 0; i < count; i++) {
      const listener = await PlainListener.join(server, code, `listener-${listeners.length}`);
      listeners.push(listener);
      joined.push(listener);
      for (const producerId of producers) await listener.consume(producerId);
    }
    return joined;
  }

  async function routers(): Promise<RoomRouter[]> {
    const path = `/internal/v1/rooms/${encodeURIComponent(code)}/routers`;
    const { status, body } = await call<{ routers: RoomRouter[] }>(server, 'GET', path);
    assert.equal(status, 200);
    return body.data.routers;
  }

  /** Sends RTP until every listener got more packets than before; fails after 5 s. */
  async function everyoneHears(group: PlainListener[], sender: RtpSender) {
    const before = group.map((l) => l.packets);
    await waitFor(async () => {
      await sender.send(5);
      return group.every((l, i) => l.packets > before[i]!) ? true : undefined;
    }, 'every listener to receive RTP');
  }

  void it('fills the origin, then opens edges; every listener hears every seat', async () => {
    const first = await seat('seat-1', 1111);
    const group = await join(7, [first.producerId]);

    const placed = await routers();
    assert.deepEqual(
      placed.map((r) => [r.role, r.transports]),
      [
        ['origin', 4], // the seat's sending transport and 3 listeners
        ['edge', 3],
        ['edge', 1],
      ],
    );
    assert.deepEqual(new Set(placed.map((r) => r.worker_index)), new Set([0, 1]));
    assert.equal(new Set(group.map((l) => l.routerId)).size, 3);
    await everyoneHears(group, first.sender);

    // A producer made after the edges opened is piped to them as well.
    const second = await seat('seat-2', 2222);
    for (const listener of group) await listener.consume(second.producerId);
    await everyoneHears(group, second.sender);

    // Closed on the origin (a MicDown): its consumers close on every router.
    server.registry.closeProducer(first.producerId);
    await waitFor(() => {
      const closed = events.filter(
        (e) => e.type === 'consumer_closed' && e.producer_id === first.producerId,
      );
      return closed.length === group.length ? closed : undefined;
    }, 'every consumer of the closed producer to close');
    const edgeConsumers = placed.filter((r) => r.role === 'edge').map((r) => r.router_id);
    const closedOnEdges = events.filter(
      (e) =>
        e.type === 'consumer_closed' &&
        e.producer_id === first.producerId &&
        e.reason === 'producer_closed' &&
        edgeConsumers.includes(e.router_id),
    );
    assert.equal(closedOnEdges.length, 4, 'the 4 edge listeners lost the closed seat');
    // The other seat still plays everywhere.
    await everyoneHears(group, second.sender);
  });

  void it('spreads listeners that join at the same moment by the budget', async () => {
    const { producerId, sender } = await seat('seat-1', 7777);
    const group = await Promise.all(
      Array.from({ length: 9 }, (_, i) => PlainListener.join(server, code, `together-${i}`)),
    );
    listeners.push(...group);
    assert.deepEqual(
      (await routers()).map((r) => [r.role, r.transports]),
      [
        ['origin', 4],
        ['edge', 3],
        ['edge', 3],
      ],
    );
    for (const listener of group) await listener.consume(producerId);
    await everyoneHears(group, sender);
  });

  void it('closes an edge router once its last listener left and the linger passed', async () => {
    const { producerId } = await seat('seat-1', 3333);
    const group = await join(5, [producerId]);
    const edge = (await routers()).find((r) => r.role === 'edge');
    assert.ok(edge, 'an edge router opened');
    for (const listener of group.slice(BUDGET)) listener.leave();
    const closed = await waitFor(
      () =>
        events.find(
          (e): e is Extract<MediaEvent, { type: 'router_closed' }> =>
            e.type === 'router_closed' && e.router_id === edge.router_id,
        ),
      'the empty edge router to close',
    );
    assert.equal(closed.reason, 'idle');
    assert.deepEqual(
      (await routers()).map((r) => r.role),
      ['origin'],
    );
    // A listener joining later, with the origin full again, gets a new edge.
    await join(1, [producerId]);
    assert.deepEqual(
      (await routers()).map((r) => r.role),
      ['origin', 'edge'],
    );
  });

  void it('refuses to produce on an edge router', async () => {
    const { producerId } = await seat('seat-1', 4444);
    const [, , , onEdge] = await join(4, [producerId]);
    const edgeRouter = server.registry.router(onEdge!.routerId);
    assert.equal(edgeRouter.role, 'edge');
    const { transport } = await server.registry.createPlainTransport(edgeRouter, 'x', 'send');
    const { status, body } = await call(server, 'POST', '/internal/v1/producers', {
      transport_id: transport.id,
      kind: 'audio',
      rtp_parameters: opusLevelRtpParameters(5555),
    });
    assert.equal(status, 409);
    assert.match(body.message, /produce on a sending one/);
  });

  void it("a killed edge worker takes only that edge's listeners", async () => {
    const { producerId, sender } = await seat('seat-1', 6666);
    const group = await join(6, [producerId]);
    const placed = await routers();
    const origin = placed.find((r) => r.role === 'origin')!;
    const edge = placed.find((r) => r.role === 'edge' && r.worker_index !== origin.worker_index);
    assert.ok(edge, 'an edge on the other worker');
    const onEdge = group.filter((l) => l.routerId === edge.router_id);
    const others = group.filter((l) => l.routerId !== edge.router_id);
    assert.ok(onEdge.length > 0 && others.length > 0);
    await everyoneHears(group, sender);

    process.kill(edge.worker_pid, 'SIGKILL');
    const lost = await waitFor(
      () =>
        events.find(
          (e): e is Extract<MediaEvent, { type: 'routers_lost' }> => e.type === 'routers_lost',
        ),
      'routers_lost',
    );
    const report = lost.routers.find((r) => r.router_id === edge.router_id);
    assert.ok(report, 'the edge is reported lost');
    assert.equal(report.role, 'edge');
    assert.equal(report.room_code, code);
    assert.deepEqual([...report.peers].sort(), onEdge.map((l) => l.peerId).sort());
    assert.ok(!lost.routers.some((r) => r.router_id === origin.router_id));

    // The others never stop: they keep receiving after the kill.
    await everyoneHears(others, sender);
    // The lost listeners come back (as after the reset frame) and hear the seat again.
    for (const listener of onEdge) listener.leave();
    const back = await join(onEdge.length, [producerId]);
    await everyoneHears(back, sender);
    assert.ok(back.every((l) => l.routerId !== edge.router_id));
  });
});
