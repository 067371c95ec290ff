/**
 * Guards shared by the meeting's deciders, in the seed's order: the meeting exists, it has
 * not ended, then who may act. Also the read-side guard the edge uses for the detail, chat
 * history and invite routes (当前活跃参会者).
 */
import type { DomainError } from '../../domain/decider.js';
import { hasLoneSurrogate } from '../../domain/text.js';
import { invalidArgument, refuse } from './errors.js';
import { isActive } from './evolve.js';
import type { MeetingState } from './types.js';

/** 会议不存在 → 会议已结束: what every command but CreateMeeting checks first. */
export function mustBeInProgress(state: MeetingState): DomainError | null {
  if (state.status === null) return refuse('MEETING_NOT_FOUND');
  if (state.status === 2) return refuse('MEETING_ENDED');
  return null;
}

/** The caller is an active participant (left_at IS NULL). */
export function mustBeActive(state: MeetingState, userId: string): DomainError | null {
  return isActive(state, userId) ? null : refuse('NOT_IN_MEETING');
}

/**
 * The REST host check (end / transfer-host / kick): the caller is the meeting's host. An
 * emptied meeting's host is the last one who left; they may still end it.
 */
export function mustBeHost(state: MeetingState, userId: string): DomainError | null {
  return state.host_id === userId ? null : refuse('HOST_ONLY');
}

/**
 * GET /rooms/:code, GET/POST /rooms/:code/chats, POST /rooms/:code/invite: the meeting
 * exists and the caller is an active participant. An ended meeting has no active
 * participant, so it answers 你当前未在会议中 (the seed lists no 会议已结束 for these).
 */
export function checkMeetingAccess(state: MeetingState, userId: string): DomainError | null {
  if (state.status === null) return refuse('MEETING_NOT_FOUND');
  return mustBeActive(state, userId);
}

/** Ids from the edge (user, participant row): non-empty, short, valid text. */
export function checkId(value: unknown, name: string): DomainError | null {
  if (typeof value !== 'string' || value.length < 1 || value.length > 64) {
    return invalidArgument(`${name} must be 1-64 characters`);
  }
  if (hasLoneSurrogate(value)) return invalidArgument(`${name} must be valid UTF-16`);
  return null;
}
