/**
 * The waiting room on one real node, through the public API only: joins wait and the host
 * hears of them; the host lists, admits (the seed's single-meeting rule judged then) and
 * denies; the joiner is told either way and, admitted, gets the router; a meeting that ends
 * tells whoever still waits.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MeetingClient } from '../api/testing/meeting-client.js';
import { mediaSkipReason } from '../../media-server/testing/harness.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';

describe('the waiting room', { skip: mediaSkipReason() }, () => {
  let api: MeetingClient;
  let started: MeetingNode | undefined;

  before(async () => {
    started = await startMeetingNode(['host', 'guest', 'late', 'busy', 'other']);
    ({ api } = started);
  });
  after(async () => {
    await started?.close();
  });

  const post = (who: string, path: string, body: object = {}) =>
    api.call('POST', `/meeting/rooms${path}`, { as: who, body });
  const get = (who: string, path: string) => api.call('GET', `/meeting/rooms${path}`, { as: who });

  it('keeps joins waiting until the host admits or denies them; each is told', async () => {
    const created = await post('host', '', { title: '等候室', waiting_room: true });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const code = created.body.data.room.room_code as string;
    assert.equal(created.body.data.room.settings, '{"waiting_room":true}');
    const host = await started!.socket('host');
    const guest = await started!.socket('guest');
    assert.equal((await host.request('meeting.room.join', { room_code: code })).code, 0);

    const waits = await post('guest', `/${code}/join`, { request_id: 'join-1' });
    assert.equal(waits.status, 200, JSON.stringify(waits.body));
    assert.equal(waits.body.data.waiting, true);
    assert.equal(waits.body.data.participant, undefined, 'not a participant yet');
    assert.equal(waits.body.data.router_id, null, 'no router while waiting');
    const heard = await host.waitFor((f) => f.event === 'meeting.waiting.joined');
    assert.deepEqual(heard.data, { room_code: code, user_id: api.ids.guest });
    // The same request answers the same; a new one waits once.
    const again = await post('guest', `/${code}/join`, { request_id: 'join-1' });
    assert.deepEqual(again.body.data, waits.body.data);
    assert.equal((await post('guest', `/${code}/join`)).body.data.waiting, true);
    const list = await get('host', `/${code}/waiting`);
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.deepEqual(
      list.body.data.list.map((w: { user_id: number }) => w.user_id),
      [api.ids.guest],
    );
    assert.equal((await get('guest', `/${code}/waiting`)).status, 403, 'the host’s list');
    assert.equal((await get('guest', `/${code}`)).status, 400, 'waiting is not in');
    assert.equal((await get('guest', `/${code}/media`)).status, 400, 'no router while waiting');

    const neither = await post('host', `/${code}/waiting/admit`, {});
    assert.equal(neither.status, 400, 'user_id or all');
    const both = await post('host', `/${code}/waiting/admit`, {
      user_id: api.ids.guest,
      all: true,
    });
    assert.equal(both.status, 400);
    const byGuest = await post('guest', `/${code}/waiting/admit`, { user_id: api.ids.guest });
    assert.equal(byGuest.status, 403);

    const admitted = await post('host', `/${code}/waiting/admit`, { user_id: api.ids.guest });
    assert.equal(admitted.status, 200, JSON.stringify(admitted.body));
    assert.deepEqual(admitted.body.data.user_ids, [api.ids.guest]);
    assert.equal(admitted.body.data.room.online_count, 2);
    const told = await guest.waitFor((f) => f.event === 'meeting.waiting.admitted');
    assert.deepEqual(told.data, { room_code: code, user_id: api.ids.guest });
    const joined = await host.waitFor((f) => f.event === 'meeting.member.joined');
    assert.equal((joined.data.participant as { user_id: number }).user_id, api.ids.guest);
    const router = await get('guest', `/${code}/media`);
    assert.equal(router.status, 200, JSON.stringify(router.body));
    assert.equal(typeof router.body.data.router_id, 'string', 'admitted: the router');
    assert.equal((await get('guest', `/${code}`)).status, 200);
    const twice = await post('host', `/${code}/waiting/admit`, { user_id: api.ids.guest });
    assert.deepEqual([twice.status, twice.body.message], [404, '该用户不在等候室中']);

    // Denied: the joiner and the host are told; the joiner stays out.
    const late = await started!.socket('late');
    assert.equal((await post('late', `/${code}/join`)).body.data.waiting, true);
    const denied = await post('host', `/${code}/waiting/deny`, { all: true });
    assert.deepEqual(denied.body.data.user_ids, [api.ids.late]);
    const left = await late.waitFor((f) => f.event === 'meeting.waiting.left');
    assert.deepEqual(left.data, { room_code: code, user_id: api.ids.late, reason: 'denied' });
    await host.waitFor((f) => f.event === 'meeting.waiting.left' && f.data.reason === 'denied');
    assert.equal((await get('late', `/${code}`)).status, 400);
  });

  it('judges the single-meeting rule at admission, and tells those waiting when it ends', async () => {
    const created = await post('host', '', { title: '单点参会', waiting_room: true });
    // The host is in one meeting at a time: the first one's host leaves it first.
    assert.equal(created.status, 400, 'the host is still in the first meeting');
    const mine = await api.call('GET', '/meeting/rooms/mine', { as: 'host' });
    const first = mine.body.data.list[0].room_code as string;
    await post('host', `/${first}/end`);
    const room = await post('host', '', { title: '单点参会' });
    const code = room.body.data.room.room_code as string;
    const on = await post('host', `/${code}/waiting-room`, { enabled: true });
    assert.equal(on.body.data.room.settings, '{"waiting_room":true}');

    assert.equal((await post('busy', `/${code}/join`)).body.data.waiting, true);
    // Meanwhile busy starts a meeting of its own: admitting it now breaks the rule.
    assert.equal((await post('busy', '', { title: '另一个会议' })).status, 201);
    const refused = await post('host', `/${code}/waiting/admit`, { user_id: api.ids.busy });
    assert.deepEqual([refused.status, refused.body.message], [400, '你当前已在其他会议中']);
    const all = await post('host', `/${code}/waiting/admit`, { all: true });
    assert.deepEqual(all.body.data.user_ids, [], 'all skips it; it keeps waiting');

    const busy = await started!.socket('busy');
    await post('host', `/${code}/end`);
    const left = await busy.waitFor((f) => f.event === 'meeting.waiting.left');
    assert.equal(left.data.reason, 'meeting_ended');
  });
});
