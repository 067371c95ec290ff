/**
 * Port of what the meeting edges read and write outside the cells: the id allocators (a
 * meeting's numeric id and room code per create request, a participant row id per
 * (meeting, user)), the single-meeting index, and the projections behind "my meetings" and
 * the chat history. Declared here, by its users; the SQL adapter
 * (src/meeting/sql/store.ts) implements it.
 */

/** A `meeting_rooms` row as the list shows it (times in ms since epoch). */
export interface MeetingRow {
  readonly id: number;
  readonly room_code: string;
  readonly title: string;
  readonly host_id: string;
  readonly type: number;
  readonly has_password: boolean;
  readonly max_members: number;
  readonly status: 0 | 1 | 2;
  readonly ended_reason: string | null;
  readonly started_at_ms: number | null;
  readonly ended_at_ms: number | null;
  readonly settings: string;
  readonly online_count: number;
  readonly created_at_ms: number;
}

export interface ChatRow {
  readonly message_id: number;
  readonly user_id: string;
  readonly content: string;
  readonly created_at_ms: number;
}

export interface Page<T> {
  readonly list: T[];
  readonly has_more: boolean;
}

/** What drawing a code for a create request gave. */
export type CodeClaim =
  /** This request's meeting: newly drawn, or drawn by an earlier try of the same request. */
  | { readonly kind: 'claimed'; readonly id: number; readonly room_code: string }
  /** Another meeting has this code: draw another. */
  | { readonly kind: 'taken' };

export interface MeetingStore {
  /**
   * Claims `roomCode` for the create request `requestKey` (caller-scoped), unless that
   * request already has a code: then that one is returned, whatever `roomCode` is.
   */
  claimMeetingCode(
    appCode: string,
    requestKey: string,
    roomCode: string,
    nowMs: number,
  ): Promise<CodeClaim>;
  /** Whether the create request `requestKey` has a code (it ran before: a retry). */
  hasCodeClaim(appCode: string, requestKey: string): Promise<boolean>;
  /**
   * Frees the code a create request claimed, once its meeting was refused (nothing was
   * created there): the code may be drawn again, and a retry of the request draws anew.
   */
  releaseMeetingCode(appCode: string, requestKey: string, roomCode: string): Promise<void>;
  /** How many meetings the user hosts that have not ended. */
  countOpenHosted(appCode: string, userId: string): Promise<number>;
  /** Whether the meeting's cell has decided the (caller-scoped) request id already. */
  requestDecided(appCode: string, roomCode: string, scopedRequestId: string): Promise<boolean>;
  /** The numeric id of the meeting with this code, or null. */
  meetingIdOf(appCode: string, roomCode: string): Promise<number | null>;
  /** The participant row id of (meeting, user): allocated once, the same on every call. */
  participantIdOf(appCode: string, roomCode: string, userId: string): Promise<number>;
  /** The code of the meeting the user is active in (the single-meeting index), or null. */
  activeMeetingOf(appCode: string, userId: string): Promise<string | null>;
  /** Meetings the user hosted or joined, `id DESC`, ids below `beforeId`. */
  listMine(
    appCode: string,
    userId: string,
    query: { status?: 0 | 1 | 2; beforeId?: number; limit: number },
  ): Promise<Page<MeetingRow>>;
  /** A meeting's chat messages, newest first, ids below `beforeId`. */
  listChats(
    appCode: string,
    roomCode: string,
    query: { beforeId?: number; limit: number },
  ): Promise<Page<ChatRow>>;
}
