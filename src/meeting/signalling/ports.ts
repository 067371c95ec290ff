/**
 * What the meeting's WebSocket signalling needs of the meeting cell: its membership and
 * presence notices. The media resources and rules are ../../edge/room-media/ports.ts's. A meeting
 * is addressed by its cell key: `{ appCode, roomId: room_code }`.
 */
import type { MemberMediaState } from '../domain/types.js';

/** An active participant, as the meeting sees it now. */
export interface MeetingMember {
  readonly isHost: boolean;
  /** The media server the meeting's state records (null: the meeting has no media). */
  readonly mediaServer: string | null;
  /**
   * Muted while the host keeps members from unmuting themselves: the media server pauses
   * the member's audio producers and refuses new ones (SELF_UNMUTE_BLOCKED).
   */
  readonly audioHeld: boolean;
  /** Who shares a screen in the meeting now, or null. */
  readonly screenSharer: string | null;
}

/** `meeting.member.state.changed`'s change; `target_user_id` omitted = the caller. */
export type MemberStateChange = MemberMediaState & { readonly target_user_id?: string | undefined };

/**
 * The meeting's membership, over the meeting cell. Every method throws the meeting's
 * refusals as AppErrors (`会议不存在` MEETING_NOT_FOUND, `你当前未在会议中` NOT_IN_MEETING, …)
 * and `unavailable` errors when the cell cannot be reached.
 */
export interface MeetingMembership {
  /**
   * The caller is an active participant (`left_at IS NULL`) of the meeting in progress, or
   * this throws: a user who never joined is treated like one who left (NOT_IN_MEETING).
   */
  member(appCode: string, roomCode: string, userId: string): Promise<MeetingMember>;
  /**
   * The cell's `StartScreenShare`: the caller shares (SCREEN_SHARE_BUSY while another
   * member does, unless the caller hosts or names that stale sharer).
   */
  startScreenShare(
    appCode: string,
    roomCode: string,
    userId: string,
    staleSharerId: string | null,
  ): Promise<void>;
  /** The cell's `StopScreenShare`: the caller's share ends (nothing if it has none). */
  stopScreenShare(appCode: string, roomCode: string, userId: string): Promise<void>;
  /**
   * The cell's `MarkSocketLive`: a live WebSocket of the user on node `nodeId` follows the
   * meeting (that node's presence lease for the user starts or is refreshed).
   */
  socketLive(appCode: string, roomCode: string, userId: string, nodeId: string): Promise<void>;
  /**
   * The cell's `MarkSocketsGone`: the user's last WebSocket on node `nodeId` left (that
   * node's lease ends; the host's grace starts when the host has none left on any node).
   */
  socketsGone(appCode: string, roomCode: string, userId: string, nodeId: string): Promise<void>;
  /**
   * The cell's `ChangeMemberState` (another member's state needs the host: HOST_ONLY_WS
   * `仅主持人可执行此操作`; at least one field). Its commit broadcasts
   * `meeting.member.state.changed` through the meeting's frame mapping.
   */
  changeState(
    appCode: string,
    roomCode: string,
    actorId: string,
    change: MemberStateChange,
  ): Promise<void>;
}
