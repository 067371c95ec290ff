/**
 * One client socket. Sending never blocks or waits: a frame is queued on the socket
 * unless its unsent bytes would pass the limit, in which case the client is too slow and
 * is closed (4008), so it costs neither memory nor time to the cells and the others.
 */
import { WebSocket } from 'ws';
import type { CellKey } from '../../cell/lease.js';
import { FrameBudget, type FrameLimits } from './frame-budget.js';
import { CLOSE } from './protocol.js';

/** Who a socket belongs to (from its token). */
export interface WsUser {
  readonly userId: string;
  readonly appCode: string;
}

/** After a close frame, the peer has this long to answer before the socket is cut. */
const CLOSE_GRACE_MS = 1_000;

/** ROOMS_WS_MAX_FRAMES_PER_S, ROOMS_WS_FRAME_BURST, ROOMS_WS_MAX_IN_FLIGHT defaults. */
export const DEFAULT_FRAME_LIMITS: FrameLimits = { ratePerSecond: 50, burst: 100, maxInFlight: 16 };

let nextId = 0;

export class WsConnection {
  readonly id = ++nextId;
  /** Room channels this socket follows, with their room. */
  readonly rooms = new Map<string, CellKey>();
  /** Cleared by each ping, set by the pong (or any message). */
  alive = true;
  /** Set once the server decided to close or cut this socket. */
  closedByServer = false;
  /** What this client may still send (frames per second, requests in flight). */
  readonly budget: FrameBudget;

  constructor(
    readonly ws: WebSocket,
    readonly user: WsUser,
    /** The client's `connection_id` (its reconnect may name it in `replaces`), or null. */
    readonly clientId: string | null,
    private readonly maxBufferedBytes: number,
    private readonly onSlow: (connection: WsConnection) => void,
    limits: FrameLimits = DEFAULT_FRAME_LIMITS,
  ) {
    this.budget = new FrameBudget(limits);
  }

  get open(): boolean {
    return !this.closedByServer && this.ws.readyState === WebSocket.OPEN;
  }

  /** Queues one text frame; false when closed or just closed for being slow. */
  send(frame: Buffer | string): boolean {
    if (!this.open) return false;
    const size = typeof frame === 'string' ? Buffer.byteLength(frame) : frame.length;
    if (this.ws.bufferedAmount + size > this.maxBufferedBytes) {
      this.onSlow(this);
      this.close(CLOSE.slowConsumer, 'send buffer full: read faster');
      return false;
    }
    this.ws.send(frame, { binary: false });
    return true;
  }

  /** Queues frames in order as one socket write; returns how many were queued. */
  sendAll(frames: readonly Buffer[]): number {
    if (frames.length === 1) return this.send(frames[0]!) ? 1 : 0;
    // ws writes each frame with its own cork/uncork; an outer cork (counted by Node's
    // streams) turns them into one write. `_socket` is ws' (long-stable) socket field.
    const socket = (this.ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    socket?.cork();
    let sent = 0;
    try {
      for (const frame of frames) {
        if (!this.send(frame)) break;
        sent += 1;
      }
    } finally {
      socket?.uncork();
    }
    return sent;
  }

  /** Close frame, then cut the socket if the peer does not complete the handshake. */
  close(code: number, reason: string): void {
    if (this.closedByServer) return;
    this.closedByServer = true;
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(code, reason);
    const timer = setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS);
    timer.unref();
    this.ws.once('close', () => clearTimeout(timer));
  }

  /**
   * A newer socket of the same client replaced this one: a close frame (4409) for a peer
   * that may still read, and the socket cut at once, for one whose path is gone.
   */
  replaced(): boolean {
    if (this.closedByServer) return false;
    this.closedByServer = true;
    if (this.ws.readyState === WebSocket.OPEN)
      this.ws.close(CLOSE.replaced, 'replaced by a newer connection');
    this.ws.terminate();
    return true;
  }

  /** Immediate: for a peer that stopped answering pings. */
  terminate(): void {
    this.closedByServer = true;
    this.ws.terminate();
  }
}
