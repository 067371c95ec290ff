/**
 * Floods one meeting user can send, as an attacker would send them (many requests at once),
 * on a node's HTTP app (embedded SQLite, in-memory counters): invites to ids that are no
 * users, invites past the inviter's and the meeting's allowances, chat lines past the user's.
 * Each refusal writes nothing, a retry of a decided request still gets its first answer, and
 * the node keeps serving everyone else.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';
import { meetingClient } from '../api/testing/meeting-client.js';

const INVITEES = Array.from({ length: 40 }, (_, i) => `i${i}`);

describe('meeting floods', () => {
  let app: TestHttpApp;
  const c = meetingClient(() => app.http);
  const { call, ids } = c;

  before(async () => {
    app = await startTestHttpApp({
      ROOMS_MEETING_INVITES_PER_USER: '20',
      ROOMS_MEETING_INVITE_WINDOW_S: '600',
      ROOMS_MEETING_INVITE_TOKENS_PER_MEETING: '30',
      ROOMS_MEETING_CHATS_PER_USER: '5',
      ROOMS_MEETING_CHAT_WINDOW_S: '600',
    });
    await c.users(['host', 'member', 'other', 'talker', 'listener', ...INVITEES]);
  });
  after(() => app?.close());

  const create = async (as: string) => {
    const r = await call('POST', '/meeting/rooms', { as, body: { title: '洪水' } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.data.room.room_code as string;
  };
  const invite = (as: string, code: string, body: Record<string, unknown>) =>
    call('POST', `/meeting/rooms/${code}/invite`, { as, body });
  const userIds = (names: readonly string[]) => names.map((n) => ids[n]!);
  /** meeting_invite notifications in the database (every recipient). */
  const inviteRows = async () => {
    const row = await app.sql.db
      .selectFrom('notifications')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('type', '=', 'meeting_invite')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };

  it('invitees that are not users of the app: 400 INVITEE_NOT_FOUND, nobody invited', async () => {
    const code = await create('other');
    const before = await inviteRows();
    const r = await invite('other', code, { invitee_ids: [ids.i0, 987_654_321, ids.i1] });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.reason, 'INVITEE_NOT_FOUND');
    assert.match(r.body.message, /987654321/);
    assert.equal(await inviteRows(), before, 'all or nothing');
    // The seed's answers stand: only users, and the request goes through.
    const ok = await invite('other', code, { invitee_ids: [ids.i0, ids.i1] });
    assert.deepEqual(ok.body.data, { pushed: 2, skipped: 0 });
    await call('POST', `/meeting/rooms/${code}/end`, { as: 'other', body: {} });
  });

  it('an invite flood: the inviter gets 20 invitees, then 429; retries answer as before', async () => {
    const code = await create('host');
    const joined = await call('POST', `/meeting/rooms/${code}/join`, { as: 'member', body: {} });
    assert.equal(joined.status, 200);
    const before = await inviteRows();
    // 10 requests of 4 invitees each, all at once, each a new request.
    const batches = Array.from({ length: 10 }, (_, b) => INVITEES.slice(b * 4, b * 4 + 4));
    const replies = await Promise.all(
      batches.map((names, b) =>
        invite('host', code, { request_id: `flood-${b}`, invitee_ids: userIds(names) }),
      ),
    );
    const ok = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 429);
    assert.equal(ok.length, 5, replies.map((r) => r.body.message).join(' | '));
    assert.equal(refused.length, 5);
    for (const r of refused) {
      assert.equal(r.body.reason, 'INVITE_RATE_LIMITED');
      assert.match(r.body.message, /^邀请过于频繁，请 \d+ 秒后重试$/);
    }
    assert.equal(await inviteRows(), before + 20, 'a refused request writes nothing');

    // A retry of a request that was sent answers its first outcome, counted once.
    const first = replies.findIndex((r) => r.status === 200);
    const again = await invite('host', code, {
      request_id: `flood-${first}`,
      invitee_ids: userIds(batches[first]!),
    });
    assert.deepEqual([again.status, again.body.data], [200, { pushed: 4, skipped: 0 }]);
    // Another member has an allowance of their own, up to the meeting's 30 tokens.
    const mine = await invite('member', code, { invitee_ids: userIds(INVITEES.slice(0, 10)) });
    assert.deepEqual([mine.status, mine.body.data], [200, { pushed: 10, skipped: 0 }]);
    const past = await invite('member', code, { invitee_ids: [ids.i11] });
    assert.deepEqual([past.status, past.body.reason], [429, 'INVITE_RATE_LIMITED']);
    assert.equal(await inviteRows(), before + 30);
    // Invitees already in the meeting are skipped, and skipping is not counted.
    const skipped = await invite('host', code, { invitee_ids: [ids.member] });
    assert.deepEqual(skipped.body.data, { pushed: 0, skipped: 1 });
    // The rest of the node still answers: another meeting's host invites.
    const theirs = await create('other');
    const other = await invite('other', theirs, { invitee_ids: [ids.i30] });
    assert.deepEqual([other.status, other.body.data], [200, { pushed: 1, skipped: 0 }]);
    for (const [who, room] of [
      ['host', code],
      ['other', theirs],
    ] as const) {
      await call('POST', `/meeting/rooms/${room}/end`, { as: who, body: {} });
    }
  });

  it('a chat flood: 5 lines, then 429 CHAT_RATE_LIMITED, nothing written; retries answer', async () => {
    const code = await create('talker');
    await call('POST', `/meeting/rooms/${code}/join`, { as: 'listener', body: {} });
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call('POST', `/meeting/rooms/${code}/chats`, {
          as: 'talker',
          body: { request_id: `line-${i}`, content: `第 ${i} 行` },
        }),
      ),
    );
    const sent = replies.filter((r) => r.status === 201);
    const refused = replies.filter((r) => r.status === 429);
    assert.equal(sent.length, 5, replies.map((r) => r.body.message).join(' | '));
    assert.equal(refused.length, 25);
    for (const r of refused) assert.equal(r.body.reason, 'CHAT_RATE_LIMITED');
    const history = await call('GET', `/meeting/rooms/${code}/chats?limit=100`, { as: 'talker' });
    assert.equal(history.body.data.list.length, 5, 'a refused line writes nothing');

    // A retry of a line that was sent answers it again, past the limit.
    const i = replies.findIndex((r) => r.status === 201);
    const retry = await call('POST', `/meeting/rooms/${code}/chats`, {
      as: 'talker',
      body: { request_id: `line-${i}`, content: `第 ${i} 行` },
    });
    assert.equal(retry.status, 201, JSON.stringify(retry.body));
    assert.deepEqual(retry.body.data, sent.find((r) => r === replies[i])!.body.data);
    // Another member of the same meeting still talks.
    const theirs = await call('POST', `/meeting/rooms/${code}/chats`, {
      as: 'listener',
      body: { content: '我还能说话' },
    });
    assert.equal(theirs.status, 201, JSON.stringify(theirs.body));
    await call('POST', `/meeting/rooms/${code}/end`, { as: 'talker', body: {} });
  });
});
