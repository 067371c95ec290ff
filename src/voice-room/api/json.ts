/**
 * The voice room's state and events as JSON answers them: the room keeps user ids in decimal
 * text (../domain/types.ts), JSON sends them as numbers (../../shared/user-id.ts). Replies
 * (./replies.ts) and frames (./voice-frame-data.ts) declare the numbers; these make them.
 */
import type { MemberPageView, MemberView, RoomView } from '../domain/view.js';
import { userIdJson } from '../../shared/user-id.js';
import { USER_FIELDS, type OneUserField } from './requests.js';

const optional = (id: string | null): number | null => (id === null ? null : userIdJson(id));

/** The GetRoom view with its user ids as numbers. */
export function roomJson(view: RoomView) {
  return {
    ...view,
    owner_user_id: optional(view.owner_user_id),
    admins: view.admins.map(userIdJson),
    mic_muted: view.mic_muted.map(userIdJson),
    seat_invitations: view.seat_invitations.map((i) => ({
      ...i,
      user_id: userIdJson(i.user_id),
      operator_user_id: userIdJson(i.operator_user_id),
    })),
    banned: view.banned.map(userIdJson),
    members: view.members.map(memberJson),
    seats: view.seats.map((s) => ({ ...s, user_id: optional(s.user_id) })),
  };
}

/** A ListMembers page with its user ids as numbers. */
export function memberPageJson(page: MemberPageView) {
  return {
    ...page,
    members: page.members.map(memberJson),
    next_after: optional(page.next_after),
  };
}

function memberJson(member: MemberView) {
  return { ...member, user_id: userIdJson(member.user_id) };
}

/** The fields that name users (./requests.ts; a frame's data is its event's fields). */
type One = OneUserField;
type Many = Exclude<keyof typeof USER_FIELDS, One>;

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
  for (const [name, count] of Object.entries(USER_FIELDS)) {
    const id = out[name];
    if (count === 'one' && typeof id === 'string') out[name] = userIdJson(id);
    if (count === 'many' && Array.isArray(id)) out[name] = id.map((u: string) => userIdJson(u));
  }
  return out as WithJsonUserIds<T>;
}
