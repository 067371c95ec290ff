/**
 * The meeting as a room kind (`meeting`): the pure decider plus what the runtime asks of a
 * room kind. One cell is one meeting; the edge should key it by the room code, so a
 * `:code` route reaches its cell directly.
 *
 * What the edge must do around it (none of it belongs in a pure decider):
 * - bcrypt the create password, and verify the join password against `password_hash`
 *   (read from the cell), after the lock check of its KeyValue counter; the verdict goes in
 *   JoinMeeting.password (see decide-membership.ts for the order);
 * - keep the single-meeting index (invariant 6) and pass `in_other_meeting`;
 * - retry CreateMeeting with a new code on ROOM_CODE_CONFLICT (5 tries in all);
 * - invite tokens (INVITE_EXPIRED) live entirely at the edge;
 * - tell the cell about WebSocket presence, per node (MarkSocketLive on join and then every
 *   third of presenceTtlMs while a socket stays, MarkSocketsGone when the node's last one
 *   goes);
 * - map events to broadcasts: MemberJoined → meeting.member.joined; MemberLeft →
 *   meeting.member.left (and, for reason `kicked`, meeting.member.kicked to that user
 *   alone); HostChanged → meeting.host.changed; MeetingEnded → meeting.room.ended plus
 *   CloseRouter; MemberStateChanged → meeting.member.state.changed; ChatSent → meeting.chat.
 */
import type { Reaction, RoomKind } from '../../domain/decider.js';
import { decideMeeting, nextMeetingDeadline } from './decide.js';
import { refuse } from './errors.js';
import { evolveMeeting, initialMeeting } from './evolve.js';
import type { MeetingCommand, MeetingEvent, MeetingSettings, MeetingState } from './types.js';
import { replyOf } from './view.js';

export type MeetingKind = RoomKind<MeetingState, MeetingCommand, MeetingEvent>;

export const defaultMeetingSettings: MeetingSettings = Object.freeze({
  emptyTtlMs: 300_000,
  hostGraceMs: 30_000,
  presenceTtlMs: 90_000,
  staleMs: 4 * 60 * 60 * 1000,
  waitingTtlMs: 10 * 60 * 1000,
  maxMembersCap: 8,
});

export function meetingKind(settings: MeetingSettings = defaultMeetingSettings): MeetingKind {
  return {
    kind: 'meeting',
    initialState: initialMeeting,
    decide: (state, command, ctx) => decideMeeting(state, command, ctx, settings),
    evolve: evolveMeeting,
    nextDeadline: (state) => nextMeetingDeadline(state, settings),
    alarmCommand: (state, nowMs) => {
      const due = nextMeetingDeadline(state, settings);
      return due !== null && due <= nowMs ? { type: 'ExpireMeetingDeadlines' } : null;
    },
    // Only CreateMeeting may bring a meeting into existence; anything else: 会议不存在.
    creates: (command) => command.type === 'CreateMeeting',
    notFound: refuse('MEETING_NOT_FOUND'),
    reply: replyOf,
    toOutbox,
    reactionsTo,
  };
}

/** What the meeting's media server must be told once an event committed. */
export function reactionsTo(event: MeetingEvent): readonly Reaction[] {
  switch (event.type) {
    case 'MemberLeft':
      // Its transports, producers and consumers: a kicked member must not stay audible.
      return [
        {
          type: 'meeting.member_media.release',
          data: { user_id: event.user_id, media_server: event.media_server ?? null },
        },
      ];
    // Whose audio the media server holds may have changed (mute-all without self-unmute).
    case 'SelfUnmuteSet':
      return [{ type: 'meeting.audio.reconcile', data: {} }];
    case 'MemberStateChanged':
      return event.audio_enabled === undefined
        ? []
        : [{ type: 'meeting.audio.reconcile', data: { user_id: event.user_id } }];
    // The media server records, or stops (each retried until done).
    case 'RecordingStarted':
      return [
        {
          type: 'meeting.recording.start',
          data: { recording_id: event.recording_id, media_server: event.media_server },
        },
      ];
    case 'RecordingStopped':
      return [
        {
          type: 'meeting.recording.stop',
          data: { recording_id: event.recording_id, media_server: event.media_server },
        },
      ];
    // A share taken over: the old sharer's screen producers close.
    case 'ScreenShareStopped':
      return event.actor_id === event.user_id
        ? []
        : [{ type: 'meeting.screen.close', data: { user_id: event.user_id } }];
    case 'MeetingEnded':
      return event.media_server
        ? [{ type: 'meeting.router.close', data: { media_server: event.media_server } }]
        : [];
    case 'MediaServerMoved':
      return [
        {
          type: 'meeting.media.reset',
          data: { to_server: event.to_server, user_ids: event.user_ids },
        },
      ];
    default:
      return [];
  }
}

/**
 * Socket presence (notices and expired leases) is kept in the log (it keeps a meeting from
 * going stale and drives the host grace), not sent out; the password hash never leaves the
 * cell.
 */
export function toOutbox(event: MeetingEvent): { type: string; data: unknown } | null {
  switch (event.type) {
    case 'SocketLive':
    case 'SocketsGone':
    case 'PresenceExpired':
      return null;
    case 'MeetingCreated': {
      const { password_hash: _secret, ...rest } = event;
      return { type: event.type, data: rest };
    }
    default:
      return { type: event.type, data: event };
  }
}
