/**
 * The meeting's JSON as the seed shows it: ids as JSON numbers (user ids are the decimal
 * JWT subjects), times as `YYYY-MM-DD HH:mm:ss`, labels in Chinese. Never a password hash.
 */
import type { MeetingView, ParticipantView } from '../domain/view.js';
import { statusLabel } from '../domain/view.js';
import { envelopeTime } from '../../shared/http-envelope.js';
import type { ChatRow, MeetingRow } from './meeting-store.js';
import { userIdJson } from '../../shared/user-id.js';

/**
 * A decimal id as a JSON number: a meeting's callers are account ids (decimal JWT subjects;
 * a forwarded or gRPC call's `caller_id` is refused otherwise: ./requests.ts `Caller`).
 */
export function idJson(id: string | null): number | null {
  return id === null ? null : Number(id);
}

/** A user id that is always there (a participant's, a chat message's) as a JSON number. */
export { userIdJson };

export function timeJson(ms: number | null): string | null {
  return ms === null ? null : envelopeTime(new Date(ms));
}

export function roomJson(view: MeetingView, id: number | null) {
  return {
    id,
    room_code: view.room_code,
    title: view.title,
    host_id: idJson(view.host_id),
    type: view.type,
    has_password: view.has_password,
    max_members: view.max_members,
    status: view.status,
    status_label: view.status_label,
    started_at: timeJson(view.started_at_ms),
    ended_at: timeJson(view.ended_at_ms),
    ended_reason: view.ended_reason,
    settings: JSON.stringify(view.settings),
    created_at: timeJson(view.created_at_ms),
    online_count: view.online_count,
  };
}

export function rowJson(row: MeetingRow) {
  return {
    id: row.id,
    room_code: row.room_code,
    title: row.title,
    host_id: idJson(row.host_id),
    type: row.type,
    has_password: row.has_password,
    max_members: row.max_members,
    status: row.status,
    status_label: statusLabel(row.status),
    started_at: timeJson(row.started_at_ms),
    ended_at: timeJson(row.ended_at_ms),
    ended_reason: row.ended_reason,
    settings: row.settings,
    created_at: timeJson(row.created_at_ms),
    online_count: row.online_count,
  };
}

/** The seed's participant object (REST answers and the `meeting.member.joined` frame). */
export function participantJson(
  p: Pick<
    ParticipantView,
    | 'id'
    | 'user_id'
    | 'role'
    | 'role_label'
    | 'is_active'
    | 'joined_at_ms'
    | 'left_at_ms'
    | 'duration'
  >,
  roomId: number | null,
) {
  return {
    id: idJson(p.id),
    room_id: roomId,
    user_id: userIdJson(p.user_id),
    role: p.role,
    role_label: p.role_label,
    is_active: p.is_active,
    joined_at: timeJson(p.joined_at_ms),
    left_at: timeJson(p.left_at_ms),
    duration: p.duration,
  };
}

/** The seed's chat message object (REST answers and the `meeting.chat` frame). */
export function chatJson(chat: ChatRow, roomId: number | null) {
  return {
    id: chat.message_id,
    room_id: roomId,
    user_id: userIdJson(chat.user_id),
    content: chat.content,
    created_at: timeJson(chat.created_at_ms),
  };
}
