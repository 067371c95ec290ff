/**
 * Meeting creations, as a flooder sends them: a quota per host like the voice rooms' (a rate
 * and a number of open meetings), refused creates that keep no room code, and a drawn code
 * that is already a voice room's id drawing another code instead of answering 409.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';
import { meetingClient } from '../api/testing/meeting-client.js';

describe('meeting creation limits', () => {
  let app: TestHttpApp;
  /** The next code drawn is this voice room's id (a collision, forced). */
  let collideWith: string | null = null;
  const c = meetingClient(() => app.http);
  const { call, ids } = c;

  before(async () => {
    app = await startTestHttpApp(
      {
        ROOMS_MEETING_CREATE_LIMIT: '3',
        ROOMS_MEETING_CREATE_WINDOW_S: '600',
        ROOMS_MAX_OPEN_MEETINGS_PER_HOST: '2',
      },
      {
        wrapMeetingStore: (store) => ({
          ...store,
          claimMeetingCode: (appCode, requestKey, roomCode, nowMs) => {
            const code = collideWith ?? roomCode;
            collideWith = null;
            return store.claimMeetingCode(appCode, requestKey, code, nowMs);
          },
        }),
      },
    );
    await c.users(['flooder', 'bystander', 'opener', 'rater', 'voicer', 'drawer']);
  });
  after(() => app?.close());

  const create = (as: string, body: Record<string, unknown> = {}) =>
    call('POST', '/meeting/rooms', { as, body: { title: '会', ...body } });
  const claimsOf = async (who: string) => {
    const rows = await app.sql.db
      .selectFrom('meeting_codes')
      .select('room_code')
      .where('request_key', 'like', `${ids[who]}:%`)
      .execute();
    return rows.map((r) => r.room_code);
  };

  it('a create flood: one meeting, the rest refused; refused creates keep no code', async () => {
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => create('flooder', { request_id: `flood-${i}` })),
    );
    const made = replies.filter((r) => r.status === 201);
    assert.equal(made.length, 1, replies.map((r) => r.body.message).join(' | '));
    // A refused create gives its place in the quota back, so some or none are 429.
    const limited = replies.filter((r) => r.status === 429);
    for (const r of replies.filter((x) => x.status !== 201)) {
      assert.ok(
        r.body.reason === 'CREATE_RATE_LIMITED' || r.body.message === '你当前已在其他会议中',
        JSON.stringify(r.body),
      );
    }
    for (const r of limited) assert.match(r.body.message, /^创建会议过于频繁，请 \d+ 秒后重试$/);
    // Only the meeting that exists holds a code.
    assert.deepEqual(await claimsOf('flooder'), [made[0]!.body.data.room.room_code]);
    // The rest of the node answers: another user creates a meeting.
    const theirs = await create('bystander');
    assert.equal(theirs.status, 201, JSON.stringify(theirs.body));
  });

  it('at most 2 open meetings per host: the third is 409; a retry of the first is not counted', async () => {
    const first = await create('opener', { request_id: 'open-1' });
    assert.equal(first.status, 201);
    const code = first.body.data.room.room_code as string;
    await call('POST', `/meeting/rooms/${code}/leave`, { as: 'opener', body: {} });
    const second = await create('opener', { request_id: 'open-2' });
    assert.equal(second.status, 201);
    const second_code = second.body.data.room.room_code as string;
    await call('POST', `/meeting/rooms/${second_code}/leave`, { as: 'opener', body: {} });
    const third = await create('opener', { request_id: 'open-3' });
    assert.equal(third.status, 409, JSON.stringify(third.body));
    assert.equal(third.body.reason, 'TOO_MANY_OPEN_ROOMS');
    const retry = await create('opener', { request_id: 'open-1' });
    assert.deepEqual([retry.status, retry.body.data], [201, first.body.data]);
  });

  it('3 creations per window: the fourth is 429 CREATE_RATE_LIMITED', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await create('rater');
      assert.equal(r.status, 201, JSON.stringify(r.body));
      const code = r.body.data.room.room_code as string;
      await call('POST', `/meeting/rooms/${code}/end`, { as: 'rater', body: {} });
    }
    const fourth = await create('rater');
    assert.deepEqual([fourth.status, fourth.body.reason], [429, 'CREATE_RATE_LIMITED']);
  });

  it('a code that is a voice room id draws another code instead of 409', async () => {
    const voice = await call('POST', '/voice/rooms', {
      as: 'voicer',
      body: { title: '语音', seat_count: 4 },
    });
    assert.equal(voice.status, 201, JSON.stringify(voice.body));
    collideWith = voice.body.data.room_id as string;
    const r = await create('drawer');
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const code = r.body.data.room.room_code as string;
    assert.notEqual(code, voice.body.data.room_id);
    assert.deepEqual(await claimsOf('drawer'), [code], 'the colliding claim was released');
  });
});
