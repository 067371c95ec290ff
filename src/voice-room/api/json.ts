/**
 * The voice room's state and events as JSON answers them: the room keeps user ids in decimal
 * text (../domain/types.ts), JSON sends them as numbers (../../shared/user-id.ts). Replies
 * (./replies.ts) and frames (./voice-frame-data.ts) declare the numbers; these make them.
 */
import type { RoomView } from '../domain/view.js';
import { isUserIdText, userIdJson } from '../../shared/user-id.js';

const optional = (id: string | null): number | null => (id === null ? null : userIdJson(id));

/** The GetRoom view with its user ids as numbers. */
export function roomJson(view: RoomView) {
  return {
    ...view,
    owner_user_id: optional(view.owner_user_id),
    admins: view.admins.map(userIdJson),
    banned: view.banned.map(userIdJson),
    members: view.members.map((m) => ({ ...m, user_id: userIdJson(m.user_id) })),
    seats: view.seats.map((s) => ({ ...s, user_id: optional(s.user_id) })),
  };
}

/** The event fields that name users (a frame's data is its event's fields). */
const ONE = ['user_id', 'operator_user_id', 'sender_user_id', 'owner_user_id'] as const;
const MANY = ['receiver_user_ids'] as const;
type One = (typeof ONE)[number];
type Many = (typeof MANY)[number];

/** A record's type with its user-id fields as JSON numbers. */
export type WithJsonUserIds<T> = T extends unknown
  ? {
      [K in keyof T]: K extends One
        ? number | Exclude<T[K], string>
        : K extends Many
          ? readonly number[]
          : T[K];
    }
  : never;

/** `fields` with its user ids (the fields above) as numbers. */
export function withJsonUserIds<T extends Record<string, unknown>>(fields: T): WithJsonUserIds<T> {
  const out: Record<string, unknown> = { ...fields };
  for (const name of ONE) {
    const id = out[name];
    if (typeof id === 'string') out[name] = userIdJson(id);
  }
  for (const name of MANY) {
    const ids = out[name];
    if (Array.isArray(ids)) out[name] = ids.map((id: string) => userIdJson(id));
  }
  return out as WithJsonUserIds<T>;
}

/**
 * A GetRoom answer as unary gRPC brings it (an edge's call to the cells tier): protobuf has no
 * null, so its string fields carry user ids in decimal and '' for none, its integers 0 for
 * none. Gives back the JSON answer: user ids as numbers, nulls where the room has none (no
 * time, room id, mic session or deadline is '' or 0 otherwise). An id already a number (the
 * forward stream's JSON) stays as it is; anything else is left for the declared reply to refuse.
 */
export function roomFromGrpc(answer: unknown): unknown {
  if (typeof answer !== 'object' || answer === null) return answer;
  const id = (v: unknown) => (v === '' ? null : isUserIdText(v) ? userIdJson(v) : v);
  const ids = (v: unknown) => (Array.isArray(v) ? v.map(id) : v);
  const orNull = (v: unknown) => (v === '' || v === 0 ? null : v);
  const each = (v: unknown, fix: (x: Record<string, unknown>) => Record<string, unknown>) =>
    Array.isArray(v)
      ? v.map((x: unknown) => (typeof x === 'object' && x !== null ? fix({ ...x }) : x))
      : v;
  const room: Record<string, unknown> = { ...answer };
  if ('owner_user_id' in room) room.owner_user_id = id(room.owner_user_id);
  for (const at of ['created_at_ms', 'closed_at_ms']) if (at in room) room[at] = orNull(room[at]);
  if ('admins' in room) room.admins = ids(room.admins);
  if ('banned' in room) room.banned = ids(room.banned);
  if ('members' in room)
    room.members = each(room.members, (m) => ({ ...m, user_id: id(m.user_id) }));
  if ('seats' in room) {
    room.seats = each(room.seats, (seat) => ({
      ...seat,
      user_id: id(seat.user_id),
      mic_session_id: orNull(seat.mic_session_id),
      publish_deadline_ms: orNull(seat.publish_deadline_ms),
    }));
  }
  return room;
}
