/** The WebSocket hub's ports, options and the C→S handler contract (see ./hub.ts). */
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { CellKey } from '../../cell/lease.js';
import type { RealtimeBus } from '../../realtime/bus.js';
import type { ReplayAnswer, ReplayFrom } from '../../realtime/frame-replay.js';
import type { RealtimeMetrics } from '../../realtime/metrics.js';
import type { WsUser } from './connection.js';
import type { FrameLimits } from './frame-budget.js';

/** Port: the token's user, or null for a bad token (accounts implement it). */
export type AuthenticateToken = (token: string) => Promise<WsUser | null>;
/** Port: may this user follow this room now? (Present in the voice room, active in the meeting.) */
export type CanFollow = (user: WsUser, key: CellKey) => Promise<boolean>;

/** What a registered C→S handler can do; it returns the ACK's data or throws an AppError. */
export interface WsContext {
  readonly user: WsUser;
  /** Stands for this socket while it lives (a WeakMap key for what is counted per socket). */
  readonly socket: object;
  follow(key: CellKey): Promise<void>;
  unfollow(key: CellKey): void;
  /** Whether this socket follows the room. */
  follows(key: CellKey): boolean;
  /**
   * Queues a frame for this socket only, sent right after the ACK (before any later frame
   * of a room), in call order. Dropped if the handler throws: a refused request sends only
   * its ACK.
   */
  sendAfterAck(event: string, data: Record<string, unknown>): void;
}

/**
 * Called once per closed socket, after it left every channel, with the rooms it still
 * followed (room kinds release what the socket held, e.g. a meeting's media) and the
 * socket's {@link WsContext.socket}. `shuttingDown` is true when the hub itself is closing.
 * Must not throw.
 */
export type SocketClosedListener = (
  user: WsUser,
  rooms: readonly CellKey[],
  shuttingDown: boolean,
  socket: object,
) => void;
/**
 * A C→S event's handler: it gets the payload as the event's declaration parsed it (the hub
 * refused anything else) and returns its ACK's data, of the declared ACK type.
 */
export type WsHandler<P extends z.ZodType = z.ZodType, A extends z.ZodType = z.ZodType> = (
  context: WsContext,
  payload: z.output<P>,
) => Promise<z.input<A>>;

export interface HubOptions {
  readonly path?: string;
  /** Unsent bytes a socket may hold before it is closed as too slow. */
  readonly maxBufferedBytes: number;
  /** Ping period; a socket that has not answered the previous ping is cut. */
  readonly pingIntervalMs: number;
  readonly maxRoomsPerSocket?: number;
  /** Per-socket C→S budget; past it the socket is closed with 4029. */
  readonly frames?: FrameLimits;
  /**
   * Room frames leave at most once per this many ms (0: at the end of each turn of the
   * event loop). A frame after a quiet spell leaves at once; under a steady stream the
   * frames of the window go out in one write per socket instead of one each.
   */
  readonly coalesceMs?: number;
}

export interface HubDeps {
  readonly bus: RealtimeBus;
  readonly authenticate: AuthenticateToken;
  readonly canFollow: CanFollow;
  /**
   * The room's frames after the client's last one (`room.subscribe {since_event_id}`);
   * absent: a subscribe never replays.
   */
  readonly replay?: (key: CellKey, from: ReplayFrom) => Promise<ReplayAnswer>;
  readonly logger: Logger;
  readonly metrics?: RealtimeMetrics;
}
