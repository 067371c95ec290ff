/**
 * Replay for a client that was briefly away: `room.subscribe {room_id, since_event_id}` (or
 * `since_version`) answers the room's frames committed after the frame it saw last
 * (`event_id`; or after the room version it had), so a short
 * drop loses no chat line, seat change or gift and needs no refetch. The frames are rebuilt
 * from the room's outbox envelopes (kept `ROOMS_OUTBOX_RETENTION_MS`) with the room kind's
 * own mapper, chained from the client's frame (`prev_event_id`). At most `limit` frames:
 * beyond that, when the client's frame is no longer known, or when retention may have
 * deleted an envelope after it, the answer is "refetch".
 */
import type { CellKey } from '../cell/lease.js';
import type { RoomEventEnvelope } from '../cell/envelope.js';
import { genericFrames, roomEventFrame, type FrameLink, type FrameMapper } from './frames.js';

/** Where a replay starts: after the client's last frame, or after a room version. */
export type ReplayFrom = { readonly eventId: string } | { readonly version: number };

/** Port: the room's outbox envelopes after one of its events (SQL: src/adapters/sql/). */
export interface RoomFrameLog {
  /**
   * The envelopes committed after `from`, in commit order, at most `limit`, with the room's
   * kind and the envelope they follow; null when the log does not reach back to `from`
   * (an unknown or deleted event; a version older than every envelope kept) or cannot
   * prove that no envelope after the anchor was deleted: never an answer with a hole.
   */
  after(
    key: CellKey,
    from: ReplayFrom,
    limit: number,
  ): Promise<{
    readonly kind: string;
    readonly anchor: FrameLink;
    readonly envelopes: readonly RoomEventEnvelope[];
  } | null>;
}

export type ReplayAnswer = { readonly replay: readonly unknown[] } | { readonly refetch: true };

/** Frames per replay: a longer absence is cheaper to refetch. */
export const REPLAY_LIMIT = 200;

export async function replayFrames(
  log: RoomFrameLog,
  mappers: ReadonlyMap<string, FrameMapper>,
  key: CellKey,
  from: ReplayFrom,
  limit = REPLAY_LIMIT,
): Promise<ReplayAnswer> {
  // One envelope more than the bound tells "more than `limit`" (most map to one frame).
  const found = await log.after(key, from, limit + 1);
  if (!found || found.envelopes.length > limit) return { refetch: true };
  const mapper = mappers.get(found.kind) ?? genericFrames;
  let prev: FrameLink = found.anchor;
  const replay: unknown[] = [];
  for (const envelope of found.envelopes) {
    for (const out of mapper.toFrames(envelope)) {
      if (out.to !== 'room') continue;
      replay.push(JSON.parse(roomEventFrame(envelope, out.event, out.data, prev)));
      prev = { roomVersion: envelope.room_version, eventId: envelope.event_id };
    }
  }
  return { replay };
}
