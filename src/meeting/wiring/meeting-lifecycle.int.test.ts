/**
 * The seed's Task 8 lifecycle scenarios on one real node, through REST and `/ws` only, with
 * short timers (ROOMS_MEETING_HOST_GRACE_MS / ROOMS_MEETING_EMPTY_TTL_MS = 1 s):
 * S1 the host's socket drops and the grace runs out: the host moves to the earliest-joined
 * member (`auto_reason: host_grace_expired`); S2 the host reconnects within the grace and
 * stays host; S3 a join within the empty TTL revives the meeting; S4 the TTL runs out: the
 * meeting ends (`empty_ttl`), its router is closed, and a join is refused 会议已结束.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { MeetingClient } from '../api/testing/meeting-client.js';
import { mediaSkipReason } from '../../media-server/testing/harness.js';
import type { RoomsNode } from '../../main/node.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';

describe('meeting lifecycle timers (seed Task 8: S1-S4)', { skip: mediaSkipReason() }, () => {
  let node: RoomsNode;
  let api: MeetingClient;
  let started: MeetingNode | undefined;
  const socket = (who: string) => started!.socket(who);
  const create = async (host: string) => {
    const res = await api.call('POST', '/meeting/rooms', { as: host, body: { title: '生命周期' } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data.room.room_code as string;
  };
  const joinRest = (who: string, code: string) =>
    api.call('POST', `/meeting/rooms/${code}/join`, { as: who, body: {} });
  const detail = async (who: string, code: string) =>
    (await api.call('GET', `/meeting/rooms/${code}`, { as: who })).body;

  before(async () => {
    started = await startMeetingNode(['h1', 'm1', 'n1', 'h2', 'm2', 'h3', 'm3', 'h4'], {
      ROOMS_TIMER_TICK_MS: '50',
      ROOMS_MEETING_HOST_GRACE_MS: '1000',
      ROOMS_MEETING_EMPTY_TTL_MS: '1000',
    });
    ({ node, api } = started);
  });
  after(async () => {
    await started?.close();
  });

  it('S1: the host’s socket drops and the grace runs out: the earliest-joined member hosts', async () => {
    const code = await create('h1');
    for (const who of ['m1', 'n1']) assert.equal((await joinRest(who, code)).status, 200);
    const host = await socket('h1');
    assert.equal((await host.request('meeting.room.join', { room_code: code })).code, 0);
    const member = await socket('m1');
    assert.equal((await member.request('meeting.room.join', { room_code: code })).code, 0);
    host.close(); // the host's last socket to the meeting
    const changed = await member.waitFor((f) => f.event === 'meeting.host.changed', 10_000);
    assert.deepEqual(
      [changed.data.old_host_id, changed.data.new_host_id, changed.data.auto_reason],
      [api.ids.h1, api.ids.m1, 'host_grace_expired'],
    );
    assert.equal((await detail('m1', code)).data.room.host_id, api.ids.m1);
  });

  it('S2: the host reconnects within the grace and stays host', async () => {
    const code = await create('h2');
    assert.equal((await joinRest('m2', code)).status, 200);
    const first = await socket('h2');
    assert.equal((await first.request('meeting.room.join', { room_code: code })).code, 0);
    const member = await socket('m2');
    assert.equal((await member.request('meeting.room.join', { room_code: code })).code, 0);
    first.close();
    await sleep(300);
    const again = await socket('h2');
    assert.equal((await again.request('meeting.room.join', { room_code: code })).code, 0);
    await sleep(1_500); // past the grace the first socket started
    assert.equal(member.events('meeting.host.changed').length, 0);
    assert.equal((await detail('h2', code)).data.room.host_id, api.ids.h2);
  });

  it('S3 and S4: a join within the empty TTL revives the meeting; after it, the meeting ends', async () => {
    const routers = () => node.media.server!.registry.stats.routers;
    const code = await create('h3');
    assert.equal((await joinRest('m3', code)).status, 200);
    for (const who of ['h3', 'm3']) {
      assert.equal(
        (await api.call('POST', `/meeting/rooms/${code}/leave`, { as: who })).status,
        200,
      );
    }
    await sleep(300); // within the 1 s TTL
    const revived = await joinRest('m3', code);
    assert.equal(revived.status, 200, JSON.stringify(revived.body));
    await sleep(1_500);
    assert.equal((await detail('m3', code)).data.room.status, 1, 'S3: still in progress');

    const withRouter = routers();
    assert.equal(
      (await api.call('POST', `/meeting/rooms/${code}/leave`, { as: 'm3' })).status,
      200,
    );
    const deadline = Date.now() + 10_000;
    let refused = await joinRest('h4', code);
    while (refused.status === 200 && Date.now() < deadline) {
      // Joined before the TTL ran out: leave again and wait for it.
      await api.call('POST', `/meeting/rooms/${code}/leave`, { as: 'h4' });
      await sleep(1_500);
      refused = await joinRest('h4', code);
    }
    assert.deepEqual([refused.status, refused.body.message], [400, '会议已结束'], 'S4');
    for (let i = 0; routers() >= withRouter && i < 100; i++) await sleep(50);
    assert.equal(routers(), withRouter - 1, 'the expired meeting’s router is closed');
  });
});
