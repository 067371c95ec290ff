/**
 * What a meeting's followers see live: the seed's S→C broadcasts of the meeting's committed
 * events, and the targeted `meeting.member.kicked`. A member who stops being active (left,
 * kicked, the meeting ended) stops receiving the meeting's frames; `meeting.room.ended`
 * ends every follow. Ids are JSON numbers; `room_code` names the meeting. The participant of
 * `meeting.member.joined` and the message of `meeting.chat` are the very objects the REST
 * join and chat answers carry (`room_id` is the meeting's numeric id); on every other frame
 * `room_id` is the frame meta's, the room code. Each frame's data is of its declared schema
 * (./meeting-frame-data.ts).
 */
import type { RoomEventEnvelope } from '../../cell/envelope.js';
import type { MeetingEvent } from '../domain/types.js';
import { roleLabel } from '../domain/view.js';
import type { FrameMapper, MappedFrame } from '../../realtime/frames.js';
import { meetingFrame, meetingUserFrame } from './meeting-frame-data.js';
import { chatJson, idJson, participantJson } from './render.js';

export const meetingFrames: FrameMapper = {
  toFrames(envelope: RoomEventEnvelope): readonly MappedFrame[] {
    const event = envelope.data as MeetingEvent;
    const room_code = envelope.room_id;
    switch (event.type) {
      case 'MemberJoined':
        return [
          meetingFrame('meeting.member.joined', {
            room_code,
            participant: participantJson(
              {
                id: event.participant_id,
                user_id: event.user_id,
                role: event.role,
                role_label: roleLabel(event.role),
                is_active: true,
                joined_at_ms: event.at_ms,
                left_at_ms: null,
                duration: 0,
              },
              event.meeting_id,
            ),
          }),
        ];
      case 'MemberLeft': {
        const left = meetingFrame('meeting.member.left', {
          room_code,
          user_id: idJson(event.user_id),
          reason: event.reason,
        });
        // A meeting that ends ends every follow after its `meeting.room.ended` (a member's
        // own unfollow could overtake that frame: it travels on the user's channel).
        if (event.reason === 'host_end' || event.reason === 'system_error') return [left];
        // The member's own sockets stop following; a kicked one is told why, alone.
        const told: MappedFrame =
          event.reason === 'kicked'
            ? meetingUserFrame(event.user_id, 'meeting.member.kicked', {
                room_code,
                reason: event.reason,
              })
            : { to: 'user', userId: event.user_id, event: null, data: {}, unfollowRoom: true };
        return [left, told];
      }
      case 'HostChanged':
        return [
          meetingFrame('meeting.host.changed', {
            room_code,
            old_host_id: idJson(event.old_host_id),
            new_host_id: idJson(event.new_host_id),
            ...(event.auto_reason ? { auto_reason: event.auto_reason } : {}),
          }),
        ];
      case 'MeetingEnded':
        return [meetingFrame('meeting.room.ended', { room_code, reason: event.reason }, true)];
      case 'MemberStateChanged': {
        const { audio_enabled, video_enabled, hand_raised } = event;
        return [
          meetingFrame('meeting.member.state.changed', {
            room_code,
            user_id: idJson(event.user_id),
            ...(audio_enabled === undefined ? {} : { audio_enabled }),
            ...(video_enabled === undefined ? {} : { video_enabled }),
            ...(hand_raised === undefined ? {} : { hand_raised }),
            actor_id: idJson(event.actor_id),
          }),
        ];
      }
      case 'MeetingLocked':
        return [
          meetingFrame('meeting.room.locked', {
            room_code,
            locked: event.locked,
            actor_id: idJson(event.actor_id),
          }),
        ];
      case 'SelfUnmuteSet':
        return [
          meetingFrame('meeting.room.self_unmute', {
            room_code,
            allowed: event.allowed,
            actor_id: idJson(event.actor_id),
          }),
        ];
      case 'RecordingStarted':
        return [
          meetingFrame('meeting.recording.started', {
            room_code,
            recording_id: event.recording_id,
            actor_id: idJson(event.actor_id),
          }),
        ];
      case 'RecordingStopped':
        return [
          meetingFrame('meeting.recording.stopped', {
            room_code,
            recording_id: event.recording_id,
            reason: event.reason,
          }),
        ];
      case 'ScreenShareStarted':
      case 'ScreenShareStopped':
        return [
          meetingFrame('meeting.member.state.changed', {
            room_code,
            user_id: idJson(event.user_id),
            screen_sharing: event.type === 'ScreenShareStarted',
            actor_id: idJson(event.type === 'ScreenShareStarted' ? event.user_id : event.actor_id),
          }),
        ];
      case 'WaitingRoomSet':
        return [
          meetingFrame('meeting.room.waiting_room', {
            room_code,
            enabled: event.enabled,
            actor_id: idJson(event.actor_id),
          }),
        ];
      case 'WaitingJoined':
        return event.host_id === null
          ? []
          : [
              meetingUserFrame(
                event.host_id,
                'meeting.waiting.joined',
                { room_code, user_id: idJson(event.user_id) },
                false,
              ),
            ];
      case 'WaitingAdmitted':
        return [
          meetingUserFrame(
            event.user_id,
            'meeting.waiting.admitted',
            { room_code, user_id: idJson(event.user_id) },
            false,
          ),
        ];
      case 'WaitingLeft': {
        const data = { room_code, user_id: idJson(event.user_id), reason: event.reason };
        const told = [event.user_id, ...(event.host_id === null ? [] : [event.host_id])];
        return [...new Set(told)].map((userId) =>
          meetingUserFrame(userId, 'meeting.waiting.left', data, false),
        );
      }
      case 'ChatSent':
        return [
          // The seed: "载荷为响应中的 message 对象", plus the room code.
          meetingFrame('meeting.chat', {
            ...chatJson(
              {
                message_id: event.message_id,
                user_id: event.user_id,
                content: event.content,
                created_at_ms: event.at_ms,
              },
              event.meeting_id,
            ),
            room_code,
          }),
        ];
      default:
        return [];
    }
  },
};
