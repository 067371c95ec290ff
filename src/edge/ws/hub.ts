/**
 * The WebSocket hub at `/ws?token=<jwt>`: one endpoint for every room kind. A socket
 * follows rooms explicitly (`room.subscribe`); this node subscribes to a room's bus
 * channel only while a local socket follows it, and pushes each bus message (one per
 * event, already a frame) to those sockets. Every socket also receives its user's
 * targeted messages. Room kinds add their own C→S events with {@link WsHub.handle}, each
 * with its declaration (./ws-declarations.ts): the hub checks every payload with it.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import type { z } from 'zod';
import type { CellKey } from '../../cell/lease.js';
import { roomChannel, userChannel } from '../../realtime/bus.js';
import type { UserMessage, WsFrame } from '../../realtime/frames.js';
import { createRealtimeMetrics, type RealtimeMetrics } from '../../realtime/metrics.js';
import { ChannelMembers } from './channel-members.js';
import { DEFAULT_FRAME_LIMITS, WsConnection, type WsUser } from './connection.js';
import { FrameCoalescer } from './frame-coalescer.js';
import { SlicedBroadcast } from './sliced-broadcast.js';

/**
 * Sockets written per slice of a room's broadcast: a few milliseconds of work, after which
 * the node's other work gets its turn. One bus message = one frame, serialised by the owner
 * and forwarded byte for byte, coalesced per room (./frame-coalescer.ts): frames that arrive
 * in one turn of the event loop, or within `coalesceMs` of the last flush, leave in one
 * write per socket.
 */
const BROADCAST_SLICE = 256;
import type {
  HubDeps,
  HubOptions,
  SocketClosedListener,
  WsContext,
  WsHandler,
} from './hub-types.js';
import { RoomSubscribe, RoomUnsubscribe } from './hub-events.js';
import { isEndOfFollows, replayFromOf, textOf } from './hub-payloads.js';
import { KeepAlive } from './keep-alive.js';
import { ackFrame, CLOSE, parseClientFrame, wsErrors, type ClientFrame } from './protocol.js';
import { parseWsPayload, type WsEventDeclaration } from './ws-declarations.js';
import { declaredReply } from '../declared-reply.js';

export type { WsUser } from './connection.js';
export type {
  AuthenticateToken,
  CanFollow,
  HubDeps,
  HubOptions,
  SocketClosedListener,
  WsContext,
  WsHandler,
} from './hub-types.js';

const CONNECTION_ID = /^[A-Za-z0-9_-]{8,64}$/;
const BAD_CONNECTION_ID = 'connection_id and replaces: 8-64 of A-Z a-z 0-9 - _, not equal';

/** The socket's `connection_id` and the one it `replaces` (each optional); null if malformed. */
function connectionIds(
  params: URLSearchParams,
): { id: string | null; replaces: string | null } | null {
  const id = params.get('connection_id');
  const replaces = params.get('replaces');
  for (const value of [id, replaces]) if (value !== null && !CONNECTION_ID.test(value)) return null;
  if (replaces !== null && replaces === id) return null;
  return { id, replaces };
}

export class WsHub {
  readonly metrics: RealtimeMetrics;
  private readonly logger: Logger;
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: 64 * 1024,
    perMessageDeflate: false,
  });
  private readonly connections = new Set<WsConnection>();
  private readonly rooms: ChannelMembers;
  private readonly users: ChannelMembers;
  /** Per C→S event: its declaration (the payload's schema) and its handler. */
  private readonly handlers = new Map<
    string,
    { readonly declaration: WsEventDeclaration; readonly handler: WsHandler }
  >();
  private readonly closedListeners: SocketClosedListener[] = [];
  /** Room frames waiting for the end of this turn, per room's member set, in order. */
  private readonly roomFrames: FrameCoalescer<ReadonlySet<WsConnection>>;
  /** Each room's frames to its followers, a slice of sockets at a time (./sliced-broadcast.ts). */
  private readonly broadcasts: SlicedBroadcast<WsConnection>;
  private readonly keepAlive: KeepAlive;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly options: HubOptions,
    private readonly deps: HubDeps,
  ) {
    this.metrics = deps.metrics ?? createRealtimeMetrics();
    this.logger = deps.logger.child({ module: 'ws-hub' });
    this.broadcasts = new SlicedBroadcast(
      BROADCAST_SLICE,
      (connection, frames) => connection.sendAll(frames),
      (count) => this.metrics.framesSent.inc(count),
    );
    this.roomFrames = new FrameCoalescer(options.coalesceMs ?? 0, (members, frames) =>
      this.broadcasts.send(members, frames),
    );
    this.rooms = new ChannelMembers(deps.bus, this.logger, (members, payload, channel) =>
      isEndOfFollows(payload)
        ? this.endFollows(members, channel)
        : this.roomFrames.queue(members, payload),
    );
    this.users = new ChannelMembers(deps.bus, this.logger, (members, payload) =>
      this.onUserMessage(members, payload),
    );
    // Dead peers hold no resources long: cut when they miss a ping.
    this.keepAlive = new KeepAlive(
      options.pingIntervalMs,
      () => this.connections,
      () => this.metrics.closed.inc({ reason: 'dead_peer' }),
    );
    this.handle(RoomSubscribe, (context, data) => this.subscribe(context, data));
    this.handle(RoomUnsubscribe, (context, data) => {
      const key = this.roomKey(context.user, data);
      context.unfollow(key);
      return Promise.resolve({ app_code: key.appCode, room_id: key.roomId });
    });
  }

  /** Serves `/ws` upgrades of this HTTP server. */
  attach(server: Server): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      if (url.pathname !== (this.options.path ?? '/ws')) {
        if (server.listenerCount('upgrade') <= 1) socket.destroy();
        return;
      }
      socket.on('error', () => socket.destroy());
      void this.upgrade(request, socket, head, url.searchParams);
    });
  }

  /**
   * Adds a C→S event (e.g. `meeting.room.join`) by its declaration: a payload it refuses is
   * answered with its refusal and never reaches the handler. Unknown events are dropped
   * silently.
   */
  handle<P extends z.ZodType, A extends z.ZodType>(
    declaration: WsEventDeclaration<P, A>,
    handler: WsHandler<P, A>,
  ): void {
    const { event } = declaration;
    if (this.handlers.has(event)) throw new Error(`ws event ${event} handled twice`);
    this.handlers.set(event, { declaration, handler });
  }

  /** The C→S events handled, in the order they were added. */
  get events(): readonly string[] {
    return [...this.handlers.keys()];
  }

  /** Adds a listener of closed sockets (see {@link SocketClosedListener}). */
  onSocketClosed(listener: SocketClosedListener): void {
    this.closedListeners.push(listener);
  }

  /** How many of this user's open sockets on this node follow the room. */
  followers(user: WsUser, key: CellKey): number {
    const channel = roomChannel(key);
    let count = 0;
    for (const c of this.users.members(userChannel(user.appCode, user.userId))) {
      if (c.rooms.has(channel) && this.connections.has(c)) count += 1;
    }
    return count;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** Closes every socket with 1001 and leaves every channel. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.keepAlive.stop();
      const closed = [...this.connections].map(
        (c) => new Promise<void>((resolve) => c.ws.once('close', () => resolve())),
      );
      for (const c of this.connections) {
        this.metrics.closed.inc({ reason: 'shutdown' });
        c.close(CLOSE.goingAway, 'server shutting down');
      }
      await Promise.all(closed);
      await Promise.all([this.rooms.clear(), this.users.clear()]);
      this.wss.close();
    })();
    return this.closing;
  }

  private async upgrade(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    params: URLSearchParams,
  ): Promise<void> {
    const token = params.get('token') ?? '';
    const ids = connectionIds(params);
    let user: WsUser | null = null;
    let failed = false;
    try {
      user = token ? await this.deps.authenticate(token) : null;
    } catch (err) {
      failed = true;
      this.logger.warn({ err }, 'token check failed');
    }
    if (this.closing || socket.destroyed) {
      socket.destroy();
      return;
    }
    // Upgrade first even for a bad token: a close code only exists on a WebSocket.
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      if (!user) {
        this.metrics.closed.inc({ reason: failed ? 'auth_unavailable' : 'unauthorized' });
        ws.close(
          failed ? CLOSE.tryAgainLater : CLOSE.unauthorized,
          failed ? 'try again later' : 'unauthorized',
        );
        return;
      }
      if (!ids) {
        this.metrics.closed.inc({ reason: 'bad_connection_id' });
        ws.close(CLOSE.badConnectionId, BAD_CONNECTION_ID);
        return;
      }
      const connection = this.accept(ws, user, ids.id);
      if (ids.replaces !== null) this.replace(connection, ids.replaces);
    });
  }

  /**
   * A reconnect names the socket it replaces: that socket of the same user is cut at once
   * (4409), here and, through the user's channel, on every other node, so what it held (a
   * meeting's media) is released now, not once it misses a ping on a path that is gone.
   * Only the caller's own sockets can be named: the id is looked up among them alone.
   */
  private replace(by: WsConnection, replaced: string): void {
    const channel = userChannel(by.user.appCode, by.user.userId);
    this.cutReplaced(this.users.members(channel), replaced);
    const message: UserMessage = { replaced };
    this.deps.bus.publish(channel, JSON.stringify(message)).catch((err: unknown) => {
      this.logger.warn({ err }, 'telling other nodes of a replaced socket failed');
    });
  }

  private cutReplaced(members: ReadonlySet<WsConnection>, replaced: string): void {
    for (const connection of [...members]) {
      if (connection.clientId !== replaced || !this.connections.has(connection)) continue;
      if (connection.replaced()) this.metrics.closed.inc({ reason: 'replaced' });
    }
  }

  private accept(ws: WebSocket, user: WsUser, clientId: string | null): WsConnection {
    const connection = new WsConnection(
      ws,
      user,
      clientId,
      this.options.maxBufferedBytes,
      () => this.metrics.closed.inc({ reason: 'slow_consumer' }),
      this.options.frames ?? DEFAULT_FRAME_LIMITS,
    );
    this.connections.add(connection);
    this.metrics.connections.set(this.connections.size);
    ws.on('error', (err) => this.logger.debug({ err }, 'socket error'));
    ws.on('pong', () => (connection.alive = true));
    ws.on('ping', () => this.admit(connection));
    ws.on('message', (data, isBinary) => {
      this.metrics.framesReceived.inc();
      connection.alive = true;
      if (!this.admit(connection) || isBinary) return;
      const text = textOf(data);
      if (!connection.budget.run(() => this.onMessage(connection, text))) {
        this.rateLimited(connection, 'rate limited: too many requests at once');
      }
    });
    ws.once('close', () => this.forget(connection));
    this.users.add(userChannel(user.appCode, user.userId), connection).catch((err: unknown) => {
      this.logger.warn({ err }, 'user channel subscribe failed');
    });
    return connection;
  }

  /** Charges one frame to the socket's budget; past it the socket is closed (4029). */
  private admit(connection: WsConnection): boolean {
    // Frames still arriving after a close are dropped unread: a burst costs no more work.
    if (!connection.open) return false;
    if (connection.budget.take()) return true;
    this.rateLimited(connection, 'rate limited: too many frames');
    return false;
  }

  private rateLimited(connection: WsConnection, reason: string): void {
    this.metrics.closed.inc({ reason: 'rate_limited' });
    connection.budget.clear();
    connection.close(CLOSE.rateLimited, reason);
  }

  private forget(connection: WsConnection): void {
    if (!this.connections.delete(connection)) return;
    if (!connection.closedByServer) this.metrics.closed.inc({ reason: 'client' });
    connection.budget.clear();
    const followed = [...connection.rooms.values()];
    for (const channel of connection.rooms.keys()) this.rooms.remove(channel, connection);
    connection.rooms.clear();
    this.users.remove(userChannel(connection.user.appCode, connection.user.userId), connection);
    this.metrics.connections.set(this.connections.size);
    this.metrics.followedRooms.set(this.rooms.size);
    for (const listener of this.closedListeners) {
      try {
        listener(connection.user, followed, this.closing !== null, connection);
      } catch (err) {
        this.logger.error({ err }, 'socket-closed listener failed');
      }
    }
  }

  private async onMessage(connection: WsConnection, text: string): Promise<void> {
    const request = parseClientFrame(text);
    if (!request) return;
    const handled = this.handlers.get(request.event);
    if (!handled) return; // the seed: events outside the whitelist are dropped
    const after: string[] = [];
    const context: WsContext = {
      user: connection.user,
      socket: connection,
      follow: (key) => this.follow(connection, key),
      unfollow: (key) => this.unfollow(connection, roomChannel(key)),
      follows: (key) => connection.rooms.has(roomChannel(key)),
      sendAfterAck: (event, data) => {
        const frame: WsFrame = { event, data, code: 0, time: new Date().toISOString() };
        after.push(JSON.stringify(frame));
      },
    };
    let reply: string;
    let ok = true;
    try {
      const payload = parseWsPayload(handled.declaration, request.data);
      // The ACK is what its declaration says, as a REST answer is (../declared-reply.ts).
      const data = declaredReply(
        handled.declaration.ack,
        request.event,
        await handled.handler(context, payload),
      );
      reply = ackFrame(request, { ok: true, data });
    } catch (error) {
      ok = false;
      this.logFailure(request, error);
      reply = ackFrame(request, { ok: false, error });
    }
    if (!connection.send(reply)) return;
    this.metrics.framesSent.inc();
    if (!ok) return;
    for (const frame of after) {
      if (!connection.send(frame)) break;
      this.metrics.framesSent.inc();
    }
  }

  private async subscribe(context: WsContext, data: z.output<typeof RoomSubscribe.payload>) {
    const key = this.roomKey(context.user, data);
    const from = replayFromOf(data);
    if (!(await this.deps.canFollow(context.user, key))) throw wsErrors.notInRoom();
    // Following first: a frame committed while the replay is read arrives live (the client
    // drops a frame it already has by its event_id).
    await context.follow(key);
    const answer = { app_code: key.appCode, room_id: key.roomId };
    if (!from || !this.deps.replay) return answer;
    return { ...answer, ...(await this.deps.replay(key, from)) };
  }

  /** Resolves once this node receives the room's events (so the ACK means "from now on"). */
  private async follow(connection: WsConnection, key: CellKey): Promise<void> {
    const channel = roomChannel(key);
    if (connection.rooms.has(channel) || !connection.open) return;
    const limit = this.options.maxRoomsPerSocket ?? 50;
    if (connection.rooms.size >= limit) throw wsErrors.tooManyRooms(limit);
    connection.rooms.set(channel, key);
    try {
      await this.rooms.add(channel, connection);
    } catch (err) {
      connection.rooms.delete(channel);
      this.logger.warn({ err, channel }, 'room channel subscribe failed');
      throw wsErrors.unavailable();
    }
    // Closed while subscribing: forget() ran before the add, undo it here.
    if (!this.connections.has(connection)) this.unfollow(connection, channel);
    this.metrics.followedRooms.set(this.rooms.size);
  }

  private unfollow(connection: WsConnection, channel: string): void {
    if (!connection.rooms.delete(channel)) return;
    this.rooms.remove(channel, connection);
    this.metrics.followedRooms.set(this.rooms.size);
  }

  /** The room ended for every follower: its earlier frames leave first, then the follows. */
  private endFollows(members: ReadonlySet<WsConnection>, channel: string): void {
    if (this.roomFrames.has(members)) this.roomFrames.flushAll();
    this.broadcasts.flush(members);
    for (const connection of [...members]) this.unfollow(connection, channel);
  }

  private onUserMessage(members: ReadonlySet<WsConnection>, payload: Buffer): void {
    // A message to a user (a kick, a leave) comes after the room frames before it.
    this.broadcasts.flush();
    let message: UserMessage;
    try {
      message = JSON.parse(payload.toString('utf8')) as UserMessage;
    } catch {
      return;
    }
    if (typeof message.replaced === 'string') this.cutReplaced(members, message.replaced);
    const frame = message.frame ? JSON.stringify(message.frame) : null;
    for (const connection of [...members]) {
      if (frame !== null && connection.send(frame)) this.metrics.framesSent.inc();
      if (message.unfollow) {
        const { app_code, room_id } = message.unfollow;
        this.unfollow(connection, roomChannel({ appCode: app_code, roomId: room_id }));
      }
    }
  }

  /** The room of a checked payload, in the token's app (any other app is refused). */
  private roomKey(user: WsUser, data: { room_id: string; app_code?: string | undefined }): CellKey {
    const { room_id, app_code } = data;
    if (app_code !== undefined && app_code !== user.appCode) throw wsErrors.otherApp();
    return { appCode: user.appCode, roomId: room_id };
  }

  private logFailure(request: ClientFrame, error: unknown): void {
    const kind = (error as { kind?: unknown }).kind;
    if (kind === undefined || kind === 'internal' || kind === 'unavailable') {
      this.logger.warn({ err: error, event: request.event }, 'ws event failed');
    }
  }
}
