/**
 * A room's crowd: the plain members of a room with more present members than its announced
 * audience size. Their joins and leaves are counted, not announced one by one
 * (types.ts {@link InCrowd}): with thousands present, a frame to every follower per join is
 * thousands of frames per join. The owner, admins and seat holders are always announced.
 */
import { seatOf } from './guards.js';
import { presentCount } from './presence-book.js';
import type { InCrowd, VoiceRoomSettings, VoiceRoomState } from './types.js';

export const DEFAULT_ANNOUNCED_AUDIENCE = 200;

function isPlainMember(state: VoiceRoomState, userId: string): boolean {
  return userId !== state.owner_user_id && !state.admins.includes(userId) && !seatOf(state, userId);
}

/**
 * The crowd mark of a presence change of `userId` that leaves `onlineAfter` members present,
 * with `onlineAround` the larger of the counts before and after it; `{}` when announced.
 */
export function crowdMark(
  state: VoiceRoomState,
  settings: VoiceRoomSettings,
  userId: string,
  onlineAfter: number,
  onlineAround: number,
): InCrowd {
  const announced = settings.announcedAudience ?? DEFAULT_ANNOUNCED_AUDIENCE;
  if (announced === 0 || onlineAround <= announced || !isPlainMember(state, userId)) return {};
  return { in_crowd: true, online_count: onlineAfter };
}

/** The mark of a join: the room has one more present member after it. */
export function joinMark(state: VoiceRoomState, settings: VoiceRoomSettings, userId: string) {
  const after = presentCount(state.presence) + 1;
  return crowdMark(state, settings, userId, after, after);
}

/** The mark of the `nth` (0-based) of the leaves decided together from `state`. */
export function leaveMark(
  state: VoiceRoomState,
  settings: VoiceRoomSettings,
  userId: string,
  nth = 0,
) {
  const before = presentCount(state.presence) - nth;
  return crowdMark(state, settings, userId, before - 1, before);
}
