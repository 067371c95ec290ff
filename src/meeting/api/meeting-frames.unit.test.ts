/**
 * The payloads of `meeting.member.joined` and `meeting.chat` are the seed's objects: the
 * participant and the chat message exactly as the REST join and chat answers render them
 * (numeric `room_id`, `role` and `role_label`), through the same outbox envelope and frame
 * builder the live path uses.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { roomEventEnvelope } from '../../cell/envelope.js';
import { isDomainError } from '../../domain/decider.js';
import { toOutbox } from '../domain/domain.js';
import { participantOf } from '../domain/evolve.js';
import {
  created,
  decide,
  fold,
  join,
  KEY,
  leave,
  MEETING_ID,
  NOW,
} from '../domain/testing/given-when-then.js';
import type { MeetingCommand, MeetingState } from '../domain/types.js';
import { participantView } from '../domain/view.js';
import { roomEventFrame, type WsFrame } from '../../realtime/frames.js';
import { meetingFrames } from './meeting-frames.js';
import { chatJson, participantJson } from './render.js';

/** Runs a command and returns the state after it and the room frames its events make. */
function run(state: MeetingState, command: MeetingCommand) {
  const events = decide(state, command);
  assert.ok(!isDomainError(events), JSON.stringify(events));
  const frames = events.flatMap((event, i) => {
    const out = toOutbox(event);
    if (!out) return [];
    const envelope = roomEventEnvelope(KEY, `e-${i}`, 101, out, NOW);
    return meetingFrames
      .toFrames(envelope)
      .filter((f) => f.to === 'room')
      .map((f) => JSON.parse(roomEventFrame(envelope, f.event, f.data, null)) as WsFrame);
  });
  return { state: fold(events, state), frames };
}

/** Account ids, decimal as every meeting user's is (../api/requests.ts `Caller`). */
const HOST = '1001';
const hosted = () => fold(created({ host: HOST }));

function restParticipant(state: MeetingState, userId: string) {
  return participantJson(participantView(state, participantOf(state, userId)!), MEETING_ID);
}

describe('meeting frames carry the seed objects', () => {
  it('meeting.member.joined: the participant object of the REST join answer', () => {
    const { state, frames } = run(hosted(), join('1002'));
    const [frame] = frames;
    assert.equal(frame?.event, 'meeting.member.joined');
    const data = frame.data as Record<string, unknown>;
    assert.deepEqual(data.participant, restParticipant(state, '1002'));
    assert.deepEqual(
      data.participant,
      {
        id: 91002,
        room_id: MEETING_ID,
        user_id: 1002,
        role: 0,
        role_label: '参会者',
        is_active: true,
        joined_at: (data.participant as { joined_at: string }).joined_at,
        left_at: null,
        duration: 0,
      },
      'the seed participant fields',
    );
    assert.equal(data.room_code, KEY.roomId);
  });

  it('the host’s own join, and a revival that makes the joiner host, say 主持人', () => {
    const hostJoin = run(fold([]), {
      type: 'CreateMeeting',
      meeting_id: MEETING_ID,
      host_user_id: HOST,
      host_participant_id: '91001',
      room_code: KEY.roomId,
      title: '周会',
      password_hash: null,
      in_other_meeting: false,
    });
    const hostFrame = hostJoin.frames.find((f) => f.event === 'meeting.member.joined')!;
    const hostParticipant = (hostFrame.data as { participant: Record<string, unknown> })
      .participant;
    assert.deepEqual([hostParticipant.role, hostParticipant.role_label], [1, '主持人']);

    const emptied = run(hosted(), leave(HOST)).state;
    const revived = run(emptied, join('1003'));
    const joined = revived.frames.find((f) => f.event === 'meeting.member.joined')!;
    assert.deepEqual(
      (joined.data as { participant: unknown }).participant,
      restParticipant(revived.state, '1003'),
    );
    assert.equal((joined.data as { participant: { role: number } }).participant.role, 1);
  });

  it('meeting.chat: the message object of the REST chat answer, room_id numeric', () => {
    const { frames } = run(hosted(), {
      type: 'SendChat',
      user_id: HOST,
      content: 'hello',
    });
    const [frame] = frames;
    assert.equal(frame?.event, 'meeting.chat');
    const message = chatJson(
      { message_id: 1, user_id: HOST, content: 'hello', created_at_ms: NOW },
      MEETING_ID,
    );
    const {
      room_code,
      room_version,
      prev_room_version,
      event_id,
      prev_event_id,
      app_code,
      ...rest
    } = frame.data as Record<string, unknown>;
    assert.deepEqual(rest, message);
    assert.equal(room_code, KEY.roomId);
    assert.deepEqual([room_version, app_code, event_id], [101, KEY.appCode, 'e-0']);
    assert.deepEqual([prev_room_version, prev_event_id], [null, null]);
  });
});
