/**
 * A voice room's listener on an edge on another media server, through a node's REST and
 * `/ws` (MariaDB + Redis, two standalone media servers of one worker each with a consumer
 * budget of 1): the first listener's receiving transport is placed on the room's origin,
 * the second's on an edge the room's server opens on the other server, and both consume the
 * seat with the producer id they were told. SIGKILL of that other server: its listener
 * alone gets `voice.media.reset` (naming the room's server and origin router); the seat
 * holder and the other listener get none and keep their media; after the reset's
 * `voice.media.join` the lost listener consumes the seat again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { mediaSkipReason } from '../../media-server/testing/harness.js';
import {
  CLUSTER_MEDIA_TOKEN,
  roomsOn,
  type RegisteredMediaServer,
} from '../../main/testing/media-cluster.js';
import {
  ok,
  startTwoMediaServers,
  type TwoMediaServers,
} from '../../main/testing/two-media-servers.js';
import { clusterSkipReason } from '../../testing/backends.js';
import { consumeSeatAudio, produceSeatAudio } from './testing/seat-audio.js';

const skip = (await clusterSkipReason()) || mediaSkipReason();

interface RoomRouter {
  router_id: string;
  role: 'origin' | 'edge';
  media_server: string | null;
}

void describe('a voice-room listener on another media server', { skip, timeout: 120_000 }, () => {
  let fx: TwoMediaServers;

  before(async () => {
    fx = await startTwoMediaServers({
      nodeId: 'voice-remote-edges-node',
      rtcPortBase: 34000,
      users: ['anna', 'bert', 'carl'],
      mediaEnv: { ROOMS_MEDIA_ROUTER_CONSUMERS: '1', ROOMS_MEDIA_PEER_LOST_MS: '1000' },
    });
  });
  after(() => fx?.close());

  const member = async (who: string, roomId: string) => {
    await fx.voice(`/${roomId}/join`, who);
    const socket = await fx.socket(who);
    ok(await socket.request('room.subscribe', { room_id: roomId }));
    const media = ok(await socket.request('voice.media.join', { room_id: roomId }));
    return { socket, media };
  };
  const routersOf = async (server: RegisteredMediaServer, roomId: string) => {
    const room = encodeURIComponent(`voice_room:default:${roomId}`);
    const response = await fetch(`${server.url}/internal/v1/rooms/${room}/routers`, {
      headers: { 'x-internal-token': CLUSTER_MEDIA_TOKEN },
    });
    assert.equal(response.status, 200);
    return ((await response.json()) as { data: { routers: RoomRouter[] } }).data.routers;
  };

  void it('resets only the lost listener when the other server is killed', async () => {
    const { room_id: roomId } = (await fx.voice('', 'anna', { title: '两台媒体服务器' })) as {
      room_id: string;
    };
    const anna = await member('anna', roomId);
    const caps = anna.media.rtp_capabilities;
    const home = (await roomsOn(fx.mA)).includes(`voice_room:default:${roomId}`) ? fx.mA : fx.mB;
    const other = home === fx.mA ? fx.mB : fx.mA;
    await fx.voice(`/${roomId}/mic/up`, 'anna', { seat_index: 0 });
    const producerId = await produceSeatAudio(anna.socket, roomId);

    const bert = await member('bert', roomId);
    const carl = await member('carl', roomId);
    await consumeSeatAudio(bert.socket, roomId, producerId, caps);
    await consumeSeatAudio(carl.socket, roomId, producerId, caps);
    const routers = await routersOf(home, roomId);
    assert.deepEqual(
      routers.map((r) => [r.role, r.media_server]),
      [
        ['origin', null],
        ['edge', other.id],
      ],
      'the second listener is on an edge on the other server',
    );
    assert.equal(bert.media.router_id, routers[0]!.router_id, 'members are told the origin');

    other.process.child.kill('SIGKILL');
    const reset = await carl.socket.waitFor((f) => f.event === 'voice.media.reset', 15_000);
    assert.deepEqual(
      [reset.data.room_id, reset.data.media_server, reset.data.router_id],
      [roomId, home.id, routers[0]!.router_id],
      'the reset names the room, its server and its origin router',
    );
    await sleep(500);
    for (const socket of [anna.socket, bert.socket]) {
      assert.ok(!socket.frames.some((f) => f.event === 'voice.media.reset'), 'nobody else');
    }
    const room = encodeURIComponent(`voice_room:default:${roomId}`);
    const listed = await fetch(`${home.url}/internal/v1/rooms/${room}/producers`, {
      headers: { 'x-internal-token': CLUSTER_MEDIA_TOKEN },
    });
    const { data } = (await listed.json()) as { data: { producers: { producer_id: string }[] } };
    assert.deepEqual(
      data.producers.map((p) => p.producer_id),
      [producerId],
      'the seat keeps its producer',
    );

    // Carl joins the media again, as the SDK does on the frame, and consumes the seat again.
    ok(await carl.socket.request('voice.media.join', { room_id: roomId }));
    await consumeSeatAudio(carl.socket, roomId, producerId, caps);
    const after = await routersOf(home, roomId);
    assert.ok(
      after.every((r) => r.media_server === null),
      'placed on the room’s server now',
    );
  });
});
