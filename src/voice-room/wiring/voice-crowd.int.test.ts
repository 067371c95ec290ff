/**
 * A voice room past its announced audience size, through one node's REST and `/ws`
 * (ROOMS_VOICE_ANNOUNCED_AUDIENCE=2): the owner's socket hears the first members join one
 * by one, then, for the crowd's joins and leaves, no `voice.member.*` frame but
 * `voice.audience` counts, the first at once and the next ones together a second later with
 * the newest count. An admin joining past the size is still announced, and the room's
 * view lists everyone present.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MeetingClient } from '../../meeting/api/testing/meeting-client.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';

const USERS = ['anna', 'bert', 'carl', 'dora', 'emil', 'finn'] as const;

void describe('a voice room with a crowd', () => {
  let started: MeetingNode | undefined;
  let api: MeetingClient;

  before(async () => {
    started = await startMeetingNode([...USERS], { ROOMS_VOICE_ANNOUNCED_AUDIENCE: '2' });
    ({ api } = started);
  });
  after(async () => {
    await started?.close();
  });

  const post = async (who: string, path: string, body: object = {}) => {
    const res = await api.call('POST', `/voice/rooms${path}`, { as: who, body });
    assert.ok(res.status < 300, `${path}: ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, unknown>;
  };

  void it('counts the crowd instead of announcing it', async () => {
    const { room_id: roomId } = (await post('anna', '', { title: '人很多' })) as {
      room_id: string;
    };
    await post('anna', `/${roomId}/join`);
    const anna = await started!.socket('anna');
    assert.equal((await anna.request('room.subscribe', { room_id: roomId })).code, 0);
    const joinedFrames = () =>
      anna.frames.filter((f) => f.event === 'voice.member.joined').map((f) => f.data.user_id);
    const counts = () =>
      anna.frames.filter((f) => f.event === 'voice.audience').map((f) => f.data.online_count);

    await post('bert', `/${roomId}/join`); // 2 present: announced
    await anna.waitFor((f) => f.event === 'voice.member.joined');
    await post('carl', `/${roomId}/join`); // 3: the crowd starts
    await anna.waitFor((f) => f.event === 'voice.audience');
    await post('dora', `/${roomId}/join`); // 4
    await post('emil', `/${roomId}/join`); // 5
    await post('emil', `/${roomId}/leave`); // 4
    await anna.waitFor((f) => f.event === 'voice.audience' && f.data.online_count === 4, 3_000);
    assert.deepEqual(joinedFrames(), [api.ids.bert], 'only the first member was announced');
    assert.deepEqual(counts(), [3, 4], 'the first count at once, then the newest of the second');
    assert.ok(!anna.frames.some((f) => f.event === 'voice.member.left'));

    // An admin is announced however large the room.
    await post('anna', `/${roomId}/admins`, { user_id: api.ids.finn, is_admin: true });
    await post('finn', `/${roomId}/join`);
    await anna.waitFor((f) => f.event === 'voice.member.joined' && f.data.user_id === api.ids.finn);
    await sleep(1_200);
    assert.deepEqual(counts(), [3, 4], 'an announced join sends no count');

    const room = await api.call('GET', `/voice/rooms/${roomId}`, { as: 'anna' });
    const members = (room.body.data.members as { user_id: number }[]).map((m) => m.user_id);
    const byId = (a: number, b: number) => a - b;
    const { anna: a, bert: b, carl: c, dora: d, finn: f } = api.ids;
    assert.deepEqual([...members].sort(byId), [a!, b!, c!, d!, f!].sort(byId));
    assert.equal(room.body.data.online_count, 5);
  });
});
