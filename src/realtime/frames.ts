/**
 * What travels on the bus and over WebSockets: the meeting seed's `ws.Message` envelope
 * `{event, seq, data, code, message, time}`, and the per-kind hook that turns a committed
 * room event into frames for the room and targeted messages for users.
 */
import type { RoomEventEnvelope } from '../cell/envelope.js';

/** The seed's frame. `seq` only on ACKs, `message` only on failed ACKs. */
export interface WsFrame {
  readonly event: string;
  readonly seq?: number;
  readonly data: unknown;
  /** 0 = success, -1 = business failure (ACKs and broadcasts). */
  readonly code: number;
  readonly message?: string;
  /** ISO 8601. */
  readonly time: string;
}

/** One output of a room kind's mapping of one committed event. */
export type MappedFrame =
  /** Broadcast to every socket following the room. */
  | {
      readonly to: 'room';
      readonly event: string;
      readonly data: Record<string, unknown>;
      /** After this frame no socket follows the room any more (e.g. the room closed). */
      readonly endsFollows?: boolean;
    }
  /** Sent to every socket of one user of the room's app, wherever connected. */
  | {
      readonly to: 'user';
      readonly userId: string;
      /** null: no frame, only the unfollow (a member who left stops hearing the room). */
      readonly event: string | null;
      readonly data: Record<string, unknown>;
      /** Also stop pushing this room to that user's sockets (e.g. kicked). */
      readonly unfollowRoom?: boolean;
    };

/**
 * A room kind's mapping from its outbox envelopes to frames (pure, runs once per event on
 * the owner). Room kinds register one per `CellDomain.kind`. At most one room frame per
 * event (its `event_id` links the room's frame chain); any number of user messages.
 */
export interface FrameMapper {
  toFrames(envelope: RoomEventEnvelope): readonly MappedFrame[];
}

/** For kinds without a mapper: the event as a room frame named after its type. */
export const genericFrames: FrameMapper = {
  toFrames: (e) => [
    {
      to: 'room',
      event: e.type,
      data:
        e.data && typeof e.data === 'object' && !Array.isArray(e.data)
          ? (e.data as Record<string, unknown>)
          : { value: e.data },
    },
  ],
};

/**
 * Keys every room event frame's `data` carries. They override the mapper's, except
 * `room_id`: a kind whose seed object has its own `room_id` (a meeting's chat message
 * carries the meeting's numeric id) keeps it.
 */
export interface RoomFrameMeta {
  readonly app_code: string;
  readonly room_id: string;
  readonly room_version: number;
  /**
   * room_version of the previous frame pushed for this room, or null when unknown (the
   * room just moved to another node). Versions without frames (a heartbeat) are skipped,
   * so versions alone cannot tell a gap.
   */
  readonly prev_room_version: number | null;
  readonly event_id: string;
  /**
   * event_id of the previous frame pushed for this room (null when unknown): a client that
   * did not receive that frame has missed something and refetches the room state.
   */
  readonly prev_event_id: string | null;
}

/** Where a room's frame chain stands: its last frame. */
export interface FrameLink {
  readonly roomVersion: number;
  readonly eventId: string;
}

/** The JSON of a room event frame, built once and pushed as is to every socket. */
export function roomEventFrame(
  envelope: RoomEventEnvelope,
  event: string,
  data: Record<string, unknown>,
  prev: FrameLink | null,
): string {
  const meta: RoomFrameMeta = {
    app_code: envelope.app_code,
    room_id: envelope.room_id,
    room_version: envelope.room_version,
    prev_room_version: prev?.roomVersion ?? null,
    event_id: envelope.event_id,
    prev_event_id: prev?.eventId ?? null,
  };
  const frame: WsFrame = {
    event,
    data: { ...data, ...meta, ...(data.room_id === undefined ? {} : { room_id: data.room_id }) },
    code: 0,
    time: new Date(envelope.occurred_at_ms).toISOString(),
  };
  return JSON.stringify(frame);
}

/**
 * A room channel message that is not a frame: every socket following the room stops
 * following it, after the frames that came before. (Frames are JSON objects, so no frame
 * is ever this text.)
 */
export const END_FOLLOWS = 'end-follows';

/** Payload of a user channel message. */
export interface UserMessage {
  /** Absent: the message only ends a follow or cuts a replaced socket. */
  readonly frame?: WsFrame;
  /** The room the user's sockets stop following. */
  readonly unfollow?: { readonly app_code: string; readonly room_id: string };
  /** The user's socket of this `connection_id` is cut: a reconnect replaced it. */
  readonly replaced?: string;
}
