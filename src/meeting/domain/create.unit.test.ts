/**
 * POST /rooms (meeting-api.md §1): the creator is host and first active participant, the
 * meeting is in progress at once, max_members 2–8 with larger values truncated; and the
 * room kind around the decider (creates, notFound, the outbox never carries the hash).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { meetingKind } from './domain.js';
import {
  CODE,
  created,
  given,
  HASH,
  decide,
  HOST,
  MEETING_ID,
  NOW,
  settings,
} from './testing/given-when-then.js';
import type { MeetingCommand, MeetingEvent } from './types.js';
import { meetingView, replyOf } from './view.js';

function create(overrides: Partial<Extract<MeetingCommand, { type: 'CreateMeeting' }>> = {}) {
  return {
    type: 'CreateMeeting',
    meeting_id: MEETING_ID,
    host_user_id: HOST,
    host_participant_id: 'p-u-host',
    room_code: CODE,
    title: '周会',
    password_hash: null,
    max_members: 4,
    in_other_meeting: false,
    ...overrides,
  } as const satisfies MeetingCommand;
}

describe('CreateMeeting', () => {
  it('[*] → 进行中: the creator is the host and the first active participant (主持人)', () => {
    const state = given()
      .when(create())
      .then([
        {
          type: 'MeetingCreated',
          meeting_id: MEETING_ID,
          room_code: CODE,
          title: '周会',
          host_id: HOST,
          has_password: false,
          password_hash: null,
          max_members: 4,
          media_server: null,
          at_ms: NOW,
        },
        {
          type: 'MemberJoined',
          meeting_id: MEETING_ID,
          user_id: HOST,
          participant_id: 'p-u-host',
          role: 1,
          rejoined: false,
          join_seq: 1,
          at_ms: NOW,
        },
      ]);
    const reply = replyOf(state, create(), []) as { room: unknown; participant: unknown };
    assert.deepEqual(reply.room, {
      room_code: CODE,
      title: '周会',
      host_id: HOST,
      type: 1,
      has_password: false,
      max_members: 4,
      status: 1,
      status_label: '进行中',
      started_at_ms: NOW,
      created_at_ms: NOW,
      ended_at_ms: null,
      ended_reason: null,
      online_count: 1,
      settings: {},
      media_server: null,
    });
    assert.deepEqual(reply.participant, {
      id: 'p-u-host',
      user_id: HOST,
      role: 1,
      role_label: '主持人',
      is_active: true,
      joined_at_ms: NOW,
      left_at_ms: null,
      duration: 0,
      left_reason: null,
      audio_enabled: false,
      video_enabled: false,
      hand_raised: false,
    });
  });

  it('a password hash makes has_password true; the view never shows the hash', () => {
    const state = given()
      .when(create({ password_hash: HASH }))
      .then(created({ hash: HASH, at: NOW }));
    assert.equal(state.password_hash, HASH);
    assert.equal(meetingView(state).has_password, true);
    assert.ok(!JSON.stringify(meetingView(state)).includes(HASH));
    assert.ok(!JSON.stringify(replyOf(state, create(), [])).includes(HASH));
  });

  it('max_members above 8 is truncated to 8; 2 and 8 are kept; omitted means 8', () => {
    for (const [asked, kept] of [
      [9, 8],
      [1000, 8],
      [8, 8],
      [2, 2],
      [undefined, 8],
    ] as const) {
      const state = given()
        .when(create({ max_members: asked }))
        .then(created({ max: kept, at: NOW }));
      assert.equal(state.max_members, kept, `asked ${asked}`);
    }
  });

  it('refuses max_members below 2 or not an integer', () => {
    for (const bad of [1, 0, -3, 2.5, Number.NaN, '4' as unknown as number]) {
      given()
        .when(create({ max_members: bad }))
        .thenError('INVALID_ARGUMENT');
    }
  });

  it('refuses a blank, too long or control-character title; keeps a title as given', () => {
    for (const bad of ['', '   ', 'x'.repeat(201), 'a\u0000b', 'line\nbreak', '\ud800']) {
      given()
        .when(create({ title: bad }))
        .thenError('INVALID_ARGUMENT');
    }
    // 200 characters (code points, so 200 emoji are fine) and surrounding spaces are kept.
    for (const ok of ['😀'.repeat(200), ' 周会 ']) {
      const [first] = given().when(create({ title: ok })).result as readonly { title?: string }[];
      assert.equal(first?.title, ok);
    }
  });

  it('refuses a malformed room code or ids', () => {
    for (const room_code of ['835000036', '835-000-03', 'abc-def-ghi', ' 835-000-036']) {
      given().when(create({ room_code })).thenError('INVALID_ARGUMENT');
    }
    given()
      .when(create({ host_user_id: '' }))
      .thenError('INVALID_ARGUMENT');
    given()
      .when(create({ host_participant_id: 'x'.repeat(65) }))
      .thenError('INVALID_ARGUMENT');
    given()
      .when(create({ password_hash: '' }))
      .thenError('INVALID_ARGUMENT');
    for (const meeting_id of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1]) {
      given().when(create({ meeting_id })).thenError('INVALID_ARGUMENT');
    }
    for (const media_server of ['', 'a b', 'x'.repeat(65), 'm\n1']) {
      given().when(create({ media_server })).thenError('INVALID_ARGUMENT');
    }
  });

  it('records the media server of the router; leaving and ending name it for the release', () => {
    const state = given()
      .when(create({ media_server: 'media-1' }))
      .then([
        { ...created({ at: NOW })[0]!, media_server: 'media-1' } as MeetingEvent,
        created({ at: NOW })[1]!,
      ]);
    assert.equal(state.media_server, 'media-1');
    assert.equal(meetingView(state).media_server, 'media-1');
    const events = decide(state, { type: 'EndMeeting', operator_user_id: HOST });
    assert.ok(Array.isArray(events));
    assert.deepEqual(
      events.map((e) => [e.type, (e as { media_server?: string }).media_server]),
      [
        ['MemberLeft', 'media-1'],
        ['MeetingEnded', 'media-1'],
      ],
    );
  });

  it('你当前已在其他会议中 when the edge says the creator is active elsewhere', () => {
    const error = given()
      .when(create({ in_other_meeting: true }))
      .thenError('IN_OTHER_MEETING');
    assert.equal(error.message, '你当前已在其他会议中');
  });

  it('会议号冲突，请重试 when the code is taken, even by an ended meeting', () => {
    given(created()).when(create()).thenError('ROOM_CODE_CONFLICT');
    given(created(), { type: 'MeetingEnded', reason: 'host_ended', at_ms: NOW })
      .when(create({ host_user_id: 'u-other' }))
      .thenError('ROOM_CODE_CONFLICT');
  });
});

describe('meetingKind', () => {
  const kind = meetingKind(settings);

  it('is the `meeting` kind; only CreateMeeting creates; a missing meeting is 会议不存在', () => {
    assert.equal(kind.kind, 'meeting');
    assert.equal(kind.creates?.(create()), true);
    assert.equal(kind.creates?.({ type: 'LeaveMeeting', user_id: HOST }), false);
    assert.equal(kind.creates?.({ type: 'ExpireMeetingDeadlines' }), false);
    assert.deepEqual(kind.notFound, {
      kind: 'not_found',
      code: 'MEETING_NOT_FOUND',
      message: '会议不存在',
    });
  });

  it('the outbox never carries the password hash, nor socket liveness notices', () => {
    const [meetingCreated] = created({ hash: HASH });
    const out = kind.toOutbox?.(meetingCreated!);
    assert.equal(out?.type, 'MeetingCreated');
    assert.ok(!JSON.stringify(out).includes(HASH));
    assert.equal((out?.data as { has_password: boolean }).has_password, true);
    assert.equal(kind.toOutbox?.({ type: 'SocketLive', user_id: HOST, at_ms: NOW }), null);
    const leftEvent = { type: 'EmptyTtlStarted', deadline_ms: 5, at_ms: 1 } as const;
    assert.deepEqual(kind.toOutbox?.(leftEvent), { type: 'EmptyTtlStarted', data: leftEvent });
  });
});
