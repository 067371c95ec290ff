/**
 * A voice room's listeners on edge routers, through one node's REST and `/ws` (embedded
 * SQLite and media server with 2 workers, a consumer budget of 1 per router): the first
 * listener's receiving transport is placed on the room's origin, the second's on an edge
 * on the other worker, and both consume the seat with the producer id they were told.
 * SIGKILL of the edge's worker: its listener alone gets `voice.media.reset` (naming the
 * room's router), the other listener and the seat holder get none and keep their media;
 * after the reset's `voice.media.join` the lost listener consumes the seat again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestClient } from '../../edge/ws/testing/ws-client.js';
import type { MeetingClient } from '../../meeting/api/testing/meeting-client.js';
import { mediaRoomOf } from '../../media-cluster/media-servers.js';
import { mediaSkipReason } from '../../media-server/testing/harness.js';
import type { RoomsNode } from '../../main/node.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';
import { consumeSeatAudio, produceSeatAudio } from './testing/seat-audio.js';

void describe('voice-room listeners on edge routers', { skip: mediaSkipReason() }, () => {
  let started: MeetingNode | undefined;
  let node: RoomsNode;
  let api: MeetingClient;

  before(async () => {
    started = await startMeetingNode(['anna', 'bert', 'carl'], {
      ROOMS_MEDIA_WORKERS: '2',
      ROOMS_MEDIA_ROUTER_CONSUMERS: '1',
    });
    ({ node, api } = started);
  });
  after(async () => {
    await started?.close();
  });

  const ok = (ack: { code: number; message?: string; data: unknown }) => {
    assert.equal(ack.code, 0, ack.message);
    return ack.data as Record<string, unknown>;
  };
  const post = async (who: string, path: string, body: object = {}) => {
    const res = await api.call('POST', `/voice/rooms${path}`, { as: who, body });
    assert.ok(res.status < 300, `${path}: ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, unknown>;
  };
  const joinMedia = async (socket: TestClient, roomId: string) =>
    ok(await socket.request('voice.media.join', { room_id: roomId }));
  const member = async (who: string, roomId: string) => {
    await post(who, `/${roomId}/join`);
    const socket = await started!.socket(who);
    ok(await socket.request('room.subscribe', { room_id: roomId }));
    const media = await joinMedia(socket, roomId);
    return { socket, media };
  };
  /** A receiving transport and a consumer of `producerId`; the transport's router. */
  const listen = async (socket: TestClient, roomId: string, producerId: string) => {
    const caps = node.media.server!.registry.routerOfRoom(mediaRoomOf(key(roomId), 'voice_room'))
      .router.rtpCapabilities;
    const id = await consumeSeatAudio(socket, roomId, producerId, caps);
    return node.media.server!.registry.transport(id).routerEntry;
  };
  const key = (roomId: string) => ({ appCode: 'default', roomId });

  void it('places listeners on an edge; a dead edge worker resets only its listener', async () => {
    const { room_id: roomId } = (await post('anna', '', { title: '大房间' })) as {
      room_id: string;
    };
    const anna = await member('anna', roomId);
    await post('anna', `/${roomId}/mic/up`, { seat_index: 0 });
    const producerId = await produceSeatAudio(anna.socket, roomId);

    const bert = await member('bert', roomId);
    const carl = await member('carl', roomId);
    const onOrigin = await listen(bert.socket, roomId, producerId);
    const onEdge = await listen(carl.socket, roomId, producerId);
    assert.deepEqual([onOrigin.role, onEdge.role], ['origin', 'edge']);
    assert.notEqual(onOrigin.slot.index, onEdge.slot.index, 'the edge is on the other worker');
    assert.equal(bert.media.router_id, onOrigin.router.id, 'members are told the origin');

    process.kill(onEdge.worker.pid, 'SIGKILL');
    const reset = await carl.socket.waitFor((f) => f.event === 'voice.media.reset', 10_000);
    assert.deepEqual(
      [reset.data.room_id, reset.data.router_id],
      [roomId, onOrigin.router.id],
      'the reset names the room and its (origin) router',
    );
    // Nobody else is told; the seat's producer is still there.
    await sleep(500);
    for (const other of [anna.socket, bert.socket]) {
      assert.ok(!other.frames.some((f) => f.event === 'voice.media.reset'));
    }
    const listed = await node.media.orchestrator!.listProducers(
      mediaRoomOf(key(roomId), 'voice_room'),
    );
    assert.deepEqual(
      listed.map((p) => p.producerId),
      [producerId],
    );

    // Carl joins the media again, as the SDK does on the frame, and consumes the seat again.
    await joinMedia(carl.socket, roomId);
    const again = await listen(carl.socket, roomId, producerId);
    assert.notEqual(again.router.id, onEdge.router.id);
  });
});
