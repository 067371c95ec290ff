/**
 * Two standalone media servers registered in Redis and one rooms node (MariaDB + Redis):
 * new rooms go on the least loaded server and none on a draining one; a kill -9 of a server
 * moves its meeting and its voice room to the other within seconds, and the members' sockets
 * get `meeting.media.reset` / `voice.media.reset` with the new router, where their media
 * calls then work.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { TestClient } from '../edge/ws/testing/ws-client.js';
import { mediaSkipReason } from '../media-server/testing/harness.js';
import { clusterSkipReason } from '../testing/backends.js';
import { reportingOutput } from '../testing/server-process.js';
import {
  drainMediaServer,
  roomsOn,
  waitForRecord,
  type RegisteredMediaServer,
} from '../main/testing/media-cluster.js';
import {
  ok,
  startTwoMediaServers,
  type TwoMediaServers,
} from '../main/testing/two-media-servers.js';

const skip = (await clusterSkipReason()) || mediaSkipReason();
/** The node reads the directory every second: a change is seen after this. */
const DIRECTORY_REFRESH_MS = 1_200;

void describe('several media servers', { skip, timeout: 180_000 }, () => {
  let fx: TwoMediaServers;
  let keyPrefix: string;
  let redis: Redis;
  let mA: RegisteredMediaServer;
  let mB: RegisteredMediaServer;
  /** The meeting and the voice room placed on mB, for the kill. */
  const onB: { meeting?: string; voiceRoom?: string } = {};

  /** Waits until the servers report what they hold, then for the node's next read. */
  const settle = async () => {
    for (const server of [mA, mB]) {
      if (!server.process.alive) continue;
      const held = (await roomsOn(server)).length;
      await waitForRecord(redis, keyPrefix, server.id, (r) => r?.load.routers === held);
    }
    await sleep(DIRECTORY_REFRESH_MS);
  };

  const createMeeting = (who: string) => fx.createMeeting(who);
  const voice = (path: string, who: string, body: object = {}) => fx.voice(path, who, body);
  const socket = (who: string): Promise<TestClient> => fx.socket(who);

  before(async () => {
    fx = await startTwoMediaServers({
      nodeId: 'media-failover-node',
      rtcPortBase: 42000,
      users: ['ann', 'ben', 'cat', 'dan', 'eve'],
    });
    ({ keyPrefix, redis, mA, mB } = fx);
  });
  after(() => fx?.close());

  void it('places rooms on the least loaded server, none on a draining one', async () => {
    await reportingOutput([mA.process, mB.process], async () => {
      // Both idle: the first goes on media-a (ties: the smaller id), the next on media-b.
      const first = await createMeeting('ann');
      await settle();
      const second = await createMeeting('ben');
      assert.deepEqual(await roomsOn(mA), [`meeting:default:${first}`]);
      assert.deepEqual(await roomsOn(mB), [`meeting:default:${second}`]);
      onB.meeting = second;

      // media-b drains: it keeps its meeting, the next meeting goes on media-a though it holds more.
      await drainMediaServer(mB, true);
      await waitForRecord(redis, keyPrefix, mB.id, (r) => r?.draining === true);
      await settle();
      const third = await createMeeting('cat');
      assert.deepEqual(await roomsOn(mB), [`meeting:default:${second}`], 'nothing new on media-b');
      assert.ok((await roomsOn(mA)).includes(`meeting:default:${third}`));

      // Now media-a drains and media-b takes rooms again: the voice room records media-b.
      await drainMediaServer(mB, false);
      await drainMediaServer(mA, true);
      await waitForRecord(redis, keyPrefix, mA.id, (r) => r?.draining === true);
      await waitForRecord(redis, keyPrefix, mB.id, (r) => r?.draining === false);
      await settle();
      const { room_id: roomId } = (await voice('', 'eve', { title: 'failover' })) as {
        room_id: string;
      };
      onB.voiceRoom = roomId;
      await voice(`/${roomId}/join`, 'eve');
      const eve = await socket('eve');
      ok(await eve.request('room.subscribe', { room_id: roomId }));
      ok(await eve.request('voice.media.join', { room_id: roomId }));
      assert.ok((await roomsOn(mB)).includes(`voice_room:default:${roomId}`));
      assert.ok(!(await roomsOn(mA)).includes(`voice_room:default:${roomId}`));
      await drainMediaServer(mA, false);
    });
  });

  void it('a kill -9 moves its rooms to the other server and resets the members', async () => {
    await reportingOutput([mA.process, mB.process], async () => {
      const code = onB.meeting!;
      const roomId = onB.voiceRoom!;
      const ben = await socket('ben');
      ok(await ben.request('meeting.room.join', { room_code: code }));
      ok(await ben.request('meeting.transport.create', { room_code: code, direction: 'send' }));
      const eve = fx.sockets[0]!;
      ok(await eve.request('voice.transport.create', { room_id: roomId, direction: 'recv' }));
      // media-b has told the directory which rooms it holds.
      const rooms = `${keyPrefix}media:server-rooms:${mB.id}`;
      for (let i = 0; i < 50; i++) {
        const held = (await redis.get(rooms)) ?? '';
        if (held.includes(code) && held.includes(roomId)) break;
        await sleep(100);
      }

      const killedAt = Date.now();
      mB.process.child.kill('SIGKILL');
      const [meetingReset, voiceReset] = await Promise.all([
        ben.waitFor((f) => f.event === 'meeting.media.reset', 20_000),
        eve.waitFor((f) => f.event === 'voice.media.reset', 20_000),
      ]);
      process.stdout.write(`# reset frames ${Date.now() - killedAt} ms after the kill -9\n`);
      assert.equal(meetingReset.data.room_code, code);
      assert.equal(voiceReset.data.room_id, roomId);
      for (const reset of [meetingReset, voiceReset]) {
        assert.equal(reset.data.media_server, mA.id);
        assert.equal(typeof reset.data.router_id, 'string');
        const caps = reset.data.rtp_capabilities as { codecs?: unknown[] };
        assert.ok(Array.isArray(caps.codecs) && caps.codecs.length > 0);
      }
      // Both rooms now have their router on media-a, where their members' calls go.
      const held = await roomsOn(mA);
      assert.ok(held.includes(`meeting:default:${code}`), held.join());
      assert.ok(held.includes(`voice_room:default:${roomId}`), held.join());
      ok(await ben.request('meeting.room.join', { room_code: code }));
      ok(await ben.request('meeting.transport.create', { room_code: code, direction: 'send' }));
      ok(await eve.request('voice.media.join', { room_id: roomId }));
      ok(await eve.request('voice.transport.create', { room_id: roomId, direction: 'recv' }));
      // Every room moved: the dead server leaves the directory.
      for (let i = 0; i < 50 && (await redis.zscore(`${keyPrefix}media:servers`, mB.id)); i++) {
        await sleep(100);
      }
      assert.equal(await redis.zscore(`${keyPrefix}media:servers`, mB.id), null);
    });
  });
});
