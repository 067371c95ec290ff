/**
 * The WebSocket signalling's {@link MeetingMembership} over the meeting API: each question
 * and notice is a call of ./signal-calls.ts, run on the meeting's owner (or forwarded there
 * once), so the answer is the cell's, on any node. A notice names no request id: it is new
 * each time (the signalling retries nothing it was told failed), so nothing keeps its outcome.
 */
import type { MeetingMembership, MemberStateChange } from '../signalling/ports.js';
import type { MeetingLimits } from './limits.js';
import type { MeetingApi } from './meeting-api.js';

function caller(appCode: string, roomCode: string, userId: string) {
  return { app_code: appCode, room_code: roomCode, caller_id: userId };
}

/** The JSON integer form the call's schema takes (user ids are decimal strings). */
function userIdNumber(userId: string): number {
  const n = Number(userId);
  return Number.isSafeInteger(n) ? n : NaN;
}

export function meetingMembership(api: MeetingApi, limits?: MeetingLimits): MeetingMembership {
  return {
    async member(appCode, roomCode, userId) {
      // A socket names codes too: unknown ones count as the REST routes' do (per user: the
      // address stays with the socket's upgrade), and past the limit every code is refused.
      await limits?.checkLookups(appCode, userId, null);
      let reply: {
        is_host: boolean;
        media_server: string | null;
        audio_held: boolean;
        screen_sharer: string | null;
      };
      try {
        reply = await api.call('MeetingMember', caller(appCode, roomCode, userId));
      } catch (error) {
        if ((error as { code?: unknown }).code === 'MEETING_NOT_FOUND') {
          await limits?.lookupFailed(appCode, userId, null);
        }
        throw error;
      }
      return {
        isHost: reply.is_host,
        mediaServer: reply.media_server,
        audioHeld: reply.audio_held,
        screenSharer: reply.screen_sharer,
      };
    },
    async startScreenShare(appCode, roomCode, userId, staleSharerId) {
      await api.call('StartScreenShare', {
        ...caller(appCode, roomCode, userId),
        stale_sharer_id: staleSharerId === null ? null : userIdNumber(staleSharerId),
      });
    },
    async stopScreenShare(appCode, roomCode, userId) {
      await api.call('StopScreenShare', caller(appCode, roomCode, userId));
    },
    async socketLive(appCode, roomCode, userId, nodeId) {
      await api.call('MarkSocketLive', {
        ...caller(appCode, roomCode, userId),
        node_id: nodeId,
      });
    },
    async socketsGone(appCode, roomCode, userId, nodeId) {
      await api.call('MarkSocketsGone', {
        ...caller(appCode, roomCode, userId),
        node_id: nodeId,
      });
    },
    async changeState(appCode, roomCode, actorId, change: MemberStateChange) {
      const { target_user_id, ...fields } = change;
      await api.call('ChangeMemberState', {
        ...caller(appCode, roomCode, actorId),
        ...fields,
        ...(target_user_id === undefined ? {} : { target_user_id: userIdNumber(target_user_id) }),
      });
    },
  };
}
