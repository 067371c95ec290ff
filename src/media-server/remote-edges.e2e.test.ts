/**
 * A room's audience over two media servers, on real mediasoup: the room's server (`origin`,
 * one worker, a consumer budget of 2, in this process) and a second server registered in
 * the same Redis directory (`edge-host`, a child process). Listeners join over the internal
 * HTTP API by room code as a node would: past the origin worker's budget they are placed on
 * an edge router the origin opens on the other server, the seat's producers piped there
 * over the network; calls about those listeners' transports and consumers, made to the
 * origin, are forwarded. Every listener hears every seat; closing a producer on the origin
 * closes its consumers on the other server; an idle edge there closes and leaves the room;
 * and a SIGKILL of the other server reports its listeners lost (`routers_lost`, role
 * `edge`, naming the server) while the origin's listeners keep hearing, and a listener
 * joining again hears again. A SIGKILL of the other server's worker alone does the same,
 * and the copy of that loss the other server reports is marked with the room's server.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import pino from 'pino';
import { MediaEventStream } from '../adapters/media/media-event-stream.js';
import {
  deleteKeysWithPrefix,
  redisAvailable,
  testKeyPrefix,
  testRedisUrl,
} from '../testing/backends.js';
import {
  CLUSTER_MEDIA_TOKEN,
  spawnMediaServer,
  type RegisteredMediaServer,
} from '../main/testing/media-cluster.js';
import type { LostRouter, MediaEvent } from './events.js';
import { mediaServerTestOptions } from './options.js';
import { startMediaServer, type MediaServer } from './server.js';
import { mediaSkipReason, room, waitFor } from './testing/harness.js';
import type { RtpSender } from './testing/plain-rtp.js';
import {
  HttpPlainListener,
  plainSeat,
  opusLevelRtpParameters,
  plainSendTransport,
} from './testing/plain-rtp.js';

const TOKEN = CLUSTER_MEDIA_TOKEN;

interface RoomRouter {
  router_id: string;
  role: 'origin' | 'edge';
  media_server: string | null;
  transports: number;
}

const skip = mediaSkipReason() || (!(await redisAvailable()) && 'no Redis at 127.0.0.1:6379');

void describe('a room audience over two media servers', { skip, timeout: 120_000 }, () => {
  const redisUrl = testRedisUrl();
  const keyPrefix = testKeyPrefix();
  let other: RegisteredMediaServer;
  let origin: MediaServer;
  let originEvents: MediaEvent[];
  let otherEvents: MediaEvent[];
  let otherStream: MediaEventStream;
  let code: string;
  const listeners: HttpPlainListener[] = [];
  const senders: RtpSender[] = [];

  before(async () => {
    other = await spawnMediaServer({
      id: 'edge-host',
      redisUrl,
      keyPrefix,
      rtcPorts: [37000, 37999],
      env: { ROOMS_MEDIA_EDGE_LINGER_MS: '300' },
    });
    origin = await startMediaServer(
      mediaServerTestOptions({
        internalToken: TOKEN,
        workerBin: process.env.ROOMS_MEDIA_WORKER_BIN ?? null,
        routerConsumers: 2,
        rtcMinPort: 36000,
        rtcMaxPort: 36999,
        peerLostMs: 1_000,
      }),
      pino({ level: process.env.ROOMS_TEST_LOG ?? 'silent' }),
      process.env,
      { id: 'origin', redisUrl, keyPrefix, advertiseUrl: null, ttlMs: 1_500 },
    );
    originEvents = [];
    origin.events.subscribe((event) => originEvents.push(event));
    otherEvents = [];
    otherStream = new MediaEventStream({ baseUrl: other.url, internalToken: TOKEN }, (event) =>
      otherEvents.push(event),
    );
    await otherStream.ready;
  });

  after(async () => {
    otherStream.close();
    await origin.close();
    await other.process.stop();
    await deleteKeysWithPrefix(redisUrl, keyPrefix).catch(() => 0);
  });

  beforeEach(async () => {
    code = room();
    await origin.registry.ensureRouter(code);
  });

  afterEach(async () => {
    for (const s of senders.splice(0)) s.close();
    for (const l of listeners.splice(0)) await l.leave();
    origin.registry.routerOfRoom(code).router.close();
  });

  /** A seat on the origin, its sender closed after the test. */
  async function seat(peer: string, ssrc: number) {
    const made = await plainSeat(origin, code, peer, ssrc);
    senders.push(made.sender);
    return made;
  }

  async function join(count: number, producers: string[]): Promise<HttpPlainListener[]> {
    const caps = origin.registry.routerOfRoom(code).router.rtpCapabilities;
    const joined: HttpPlainListener[] = [];
    for (let i = 0; i < count; i++) {
      const peer = `listener-${listeners.length}`;
      const listener = await HttpPlainListener.join(origin, TOKEN, code, peer);
      listeners.push(listener);
      joined.push(listener);
      for (const producerId of producers) await listener.consume(producerId, caps);
    }
    return joined;
  }

  async function routers(): Promise<RoomRouter[]> {
    const path = `${origin.url}/internal/v1/rooms/${encodeURIComponent(code)}/routers`;
    const response = await fetch(path, { headers: { 'x-internal-token': TOKEN } });
    assert.equal(response.status, 200);
    return ((await response.json()) as { data: { routers: RoomRouter[] } }).data.routers;
  }

  async function everyoneHears(group: HttpPlainListener[], sender: RtpSender) {
    const before = group.map((l) => l.packets);
    await waitFor(async () => {
      await sender.send(5);
      return group.every((l, i) => l.packets > before[i]!) ? true : undefined;
    }, 'every listener to receive RTP');
  }

  void it('places listeners past its workers on the other server; all hear every seat', async () => {
    const first = await seat('seat-1', 3111);
    const group = await join(4, [first.producerId]);

    const placed = await routers();
    assert.deepEqual(
      placed.map((r) => [r.role, r.media_server, r.transports]),
      [
        ['origin', null, 3], // the seat's sending transport and 2 listeners
        ['edge', 'edge-host', 2],
      ],
    );
    const remoteEdge = placed[1]!.router_id;
    assert.deepEqual(
      group.map((l) => l.routerId === remoteEdge),
      [false, false, true, true],
    );
    await everyoneHears(group, first.sender);

    // A producer made after the edge opened reaches it too.
    const second = await seat('seat-2', 3222);
    const caps = origin.registry.routerOfRoom(code).router.rtpCapabilities;
    const consumers = [];
    for (const listener of group) consumers.push(await listener.consume(second.producerId, caps));
    await everyoneHears(group, second.sender);

    // Closing it on the origin closes its consumers over there, announced by that server.
    origin.registry.closeProducer(second.producerId);
    const remoteConsumers = consumers.slice(2);
    await waitFor(() => {
      const closed = otherEvents.filter(
        (e) =>
          e.type === 'consumer_closed' &&
          remoteConsumers.includes(e.consumer_id) &&
          e.producer_id === second.producerId &&
          e.reason === 'producer_closed',
      );
      return closed.length === 2 ? true : undefined;
    }, 'the remote consumers of the closed producer to close');
    await sleep(100); // packets still in flight
    const counts = group.map((l) => l.packets);
    await second.sender.send(10);
    assert.deepEqual(
      group.map((l) => l.packets),
      counts,
      'nobody hears a closed producer',
    );
    await everyoneHears(group, first.sender);

    // A call about a remote listener's transport is answered by the server holding it.
    const stats = await fetch(
      `${origin.url}/internal/v1/transports/${group[3]!.transportId}/stats`,
      {
        headers: { 'x-internal-token': TOKEN },
      },
    );
    assert.equal(stats.status, 200);

    // The remote listeners leave: the edge closes over there and leaves the room.
    await group[2]!.leave();
    await group[3]!.leave();
    await waitFor(async () => ((await routers()).length === 1 ? true : undefined), 'edge gone');
    assert.ok(
      otherEvents.some(
        (e) => e.type === 'router_closed' && e.router_id === remoteEdge && e.reason === 'idle',
      ),
    );
  });

  void it('refuses a consumer on a remote listener of a producer of another room', async () => {
    const first = await seat('seat-1', 3333);
    const [, , remote] = await join(3, [first.producerId]);
    const otherRoom = room();
    await origin.registry.ensureRouter(otherRoom);
    const { id } = await plainSendTransport(origin, otherRoom, 'elsewhere');
    const { producer } = await origin.registry.createProducer(
      id,
      'audio',
      opusLevelRtpParameters(3334) as never,
      false,
    );
    const caps = origin.registry.routerOfRoom(code).router.rtpCapabilities;
    await assert.rejects(remote!.consume(producer.id, caps), /\/consumers: 400 /);
    origin.registry.routerOfRoom(otherRoom).router.close();
  });

  void it("a SIGKILL of the other server's worker loses only the listeners there", async () => {
    const first = await seat('seat-1', 3555);
    const group = await join(3, [first.producerId]);
    await everyoneHears(group, first.sender);
    const info = await fetch(`${other.url}/internal/info`, {
      headers: { 'x-internal-token': TOKEN },
    });
    const { data } = (await info.json()) as { data: { workers: { pid: number }[] } };
    originEvents.length = 0;
    process.kill(data.workers[0]!.pid, 'SIGKILL');

    const lost = await waitFor(() => {
      const event = originEvents.find((e) => e.type === 'routers_lost');
      return event?.type === 'routers_lost' ? event.routers : undefined;
    }, 'routers_lost for the remote edge');
    assert.deepEqual(
      lost.map((r) => [r.role, r.media_server, r.peers]),
      [['edge', 'edge-host', [group[2]!.peerId]]],
    );
    // The other server reported it too, for the room's server to act on: marked as such.
    const there = otherEvents.find((e) => e.type === 'routers_lost');
    assert.equal(there?.type === 'routers_lost' && there.routers[0]?.origin_server, 'origin');
    await everyoneHears(group.slice(0, 2), first.sender);
    // The server restarts its worker: a listener joining again is placed there and hears.
    const [again] = await waitFor(
      async () => {
        const joined = await join(1, [first.producerId]).catch(() => undefined);
        return joined;
      },
      'a listener to join again',
      15_000,
    );
    await everyoneHears([again!], first.sender);
  });

  void it('a SIGKILL of the other server loses only its listeners; they join again', async () => {
    const first = await seat('seat-1', 3444);
    const group = await join(4, [first.producerId]);
    await everyoneHears(group, first.sender);
    const [remoteA, remoteB] = group.slice(2);
    originEvents.length = 0;

    other.process.child.kill('SIGKILL');
    const lost = await waitFor(() => {
      const event = originEvents.find((e) => e.type === 'routers_lost');
      return event?.type === 'routers_lost' ? event.routers : undefined;
    }, 'routers_lost for the remote edge');
    assert.equal(lost.length, 1);
    const [edge] = lost as [LostRouter];
    assert.deepEqual(
      [edge.role, edge.media_server, edge.room_code, [...edge.peers].sort()],
      ['edge', 'edge-host', code, [remoteA!.peerId, remoteB!.peerId].sort()],
    );
    assert.equal((await routers()).length, 1, 'the lost edge left the room');

    // The origin's listeners never stopped hearing; a lost listener joining again does.
    await everyoneHears(group.slice(0, 2), first.sender);
    const [again] = await join(1, [first.producerId]);
    await everyoneHears([again!], first.sender);
  });
});
