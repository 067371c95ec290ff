/**
 * Rooms a dead media server never listed: a meeting whose router was made after the server's
 * last heartbeat, and a voice room recorded there that never made a router. The failover
 * cannot move them (they are not in the server's rooms list); their next join or media call
 * finds the server lost from the directory, moves the room (the members get the reset
 * frame) and is answered from the other server, or answers 会议媒体服务暂不可用 once and the
 * retry works. Two standalone media servers, one rooms node on MariaDB + Redis.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { TestClient } from '../edge/ws/testing/ws-client.js';
import type { MeetingClient } from '../meeting/api/testing/meeting-client.js';
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

void describe('rooms a dead media server never listed', { skip, timeout: 180_000 }, () => {
  let fx: TwoMediaServers;
  let keyPrefix: string;
  let redis: Redis;
  let mA: RegisteredMediaServer;
  let mB: RegisteredMediaServer;
  let api: MeetingClient;

  const createMeeting = (who: string) => fx.createMeeting(who);
  const voice = (path: string, who: string, body: object = {}) => fx.voice(path, who, body);
  const socket = (who: string): Promise<TestClient> => fx.socket(who);

  before(async () => {
    fx = await startTwoMediaServers({
      nodeId: 'unlisted-node',
      rtcPortBase: 44000,
      users: ['ann', 'ben', 'cat', 'eve'],
    });
    ({ keyPrefix, redis, mA, mB, api } = fx);
  });
  after(() => fx?.close());

  void it('moves them on their next join or media call and answers from the live server', async () => {
    await reportingOutput([mA.process, mB.process], async () => {
      // media-a drains so that every new room goes on media-b.
      await drainMediaServer(mA, true);
      await waitForRecord(redis, keyPrefix, mA.id, (r) => r?.draining === true);
      await sleep(1_200);
      const first = await createMeeting('ann');
      const second = await createMeeting('ben');
      const { room_id: roomId } = (await voice('', 'eve', { title: 'unlisted' })) as {
        room_id: string;
      };
      await voice(`/${roomId}/join`, 'eve');
      const held = await roomsOn(mB);
      assert.ok(held.includes(`meeting:default:${first}`), held.join());
      assert.ok(held.includes(`meeting:default:${second}`), held.join());
      assert.ok(!held.includes(`voice_room:default:${roomId}`), 'the voice room has no router');
      await drainMediaServer(mA, false);
      await waitForRecord(redis, keyPrefix, mA.id, (r) => r?.draining === false);

      const ben = await socket('ben');
      ok(await ben.request('meeting.room.join', { room_code: second }));
      const eve = await socket('eve');
      ok(await eve.request('room.subscribe', { room_id: roomId }));

      // The kill comes before media-b's next beat lists the meetings' routers: its last list
      // (rewritten here, as it would have been a beat earlier) holds none of these rooms.
      mB.process.child.kill('SIGKILL');
      const listKey = `${keyPrefix}media:server-rooms:${mB.id}`;
      const list = JSON.parse((await redis.get(listKey)) ?? '{"boot":"","rooms":[]}') as {
        boot: string;
        rooms: string[];
      };
      const unlisted = list.rooms.filter((r) => !r.includes(first) && !r.includes(second));
      await redis.set(listKey, JSON.stringify({ boot: list.boot, rooms: unlisted }));
      // The failover moved what was listed (nothing of these) and forgot media-b.
      for (let i = 0; i < 100 && (await redis.zscore(`${keyPrefix}media:servers`, mB.id)); i++) {
        await sleep(100);
      }
      assert.equal(await redis.zscore(`${keyPrefix}media:servers`, mB.id), null);
      assert.deepEqual(
        (await roomsOn(mA)).filter((r) => r.includes(first) || r.includes(second)),
        [],
        'the failover did not move the unlisted meetings',
      );

      // A REST join of the first meeting moves it and answers media-a's router.
      const join = await api.call('POST', `/meeting/rooms/${first}/join`, { as: 'cat', body: {} });
      assert.equal(join.status, 200, JSON.stringify(join.body));
      assert.equal(typeof join.body.data.router_id, 'string');
      assert.ok((await roomsOn(mA)).includes(`meeting:default:${first}`));

      // A media call in the second answers the retryable error, the reset follows, the retry works.
      const failed = await ben.request('meeting.transport.create', {
        room_code: second,
        direction: 'send',
      });
      assert.equal(failed.message, '会议媒体服务暂不可用');
      const reset = await ben.waitFor((f) => f.event === 'meeting.media.reset', 10_000);
      assert.equal(reset.data.room_code, second);
      assert.equal(reset.data.media_server, mA.id);
      ok(await ben.request('meeting.transport.create', { room_code: second, direction: 'send' }));

      // The voice room that never made a router: its media join is answered from media-a.
      const router = ok(await eve.request('voice.media.join', { room_id: roomId }));
      assert.equal(typeof router.router_id, 'string');
      assert.ok((await roomsOn(mA)).includes(`voice_room:default:${roomId}`));
      ok(await eve.request('voice.transport.create', { room_id: roomId, direction: 'recv' }));
    });
  });
});
