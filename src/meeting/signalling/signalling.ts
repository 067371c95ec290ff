/**
 * The meeting's WebSocket signalling (meeting-api.md, "WebSocket 信令协议") on the `/ws`
 * hub: the seed's 9 C→S events and `meeting.consumer.preferences` (beyond the seed), each
 * ACKed by the hub (`<event>.ack`, code 0 / -1 with the seed's Chinese message). Only
 * these are registered: any other `meeting.*` event a client
 * sends (`meeting.member.joined`, `meeting.chat`, …) is dropped by the hub unanswered, so
 * no client can forge a broadcast.
 *
 * What a socket made on the media server lives as long as the socket: its close releases
 * exactly that (a reconnect's new socket keeps what it made meanwhile, on any node), and
 * `meeting.room.leave` releases everything the user holds in the meeting.
 *
 * Presence is per node: the meeting keeps a lease per (user, node) and judges "the host's
 * last socket" across all nodes. This node reports `socketLive` with its node id on
 * `meeting.room.join` and then every `liveRefreshMs` (a third of the meeting's presence TTL)
 * while a socket of the user here follows the meeting (the resource records' TTL restarts
 * too), and `socketsGone` when its last one stops. If this node dies, its leases simply run
 * out. The notices of one (user, meeting) leave in the order they were decided here, so a
 * disconnect's notice never overtakes the reconnect's.
 */
import type { Logger } from 'pino';
import { routeKey, type CellKey } from '../../cell/lease.js';
import { defaultMeetingSettings } from '../domain/domain.js';
import type { MediaServers } from '../../media-cluster/media-servers.js';
import type { z } from 'zod';
import type { WsContext, WsHub, WsUser } from '../../edge/ws/hub.js';
import type { RoomBroadcaster } from '../../edge/room-media/media-call.js';
import { MediaHandlers } from '../../edge/room-media/media-handlers.js';
import type { TurnSettings } from '../../edge/room-media/ice-servers.js';
import type { MediaCaps } from '../../edge/room-media/media-admission.js';
import type { MediaHolders, RoomMediaState } from '../../edge/room-media/ports.js';
import {
  MEMBER_LEFT,
  PRODUCER_NEW,
  producerFrame,
  userIdJson,
  WS_LEAVE_REASON,
  type WsLeftData,
} from './frames.js';
import { meetingMediaRules } from './media-rules.js';
import type { MeetingMembership } from './ports.js';
import type { MemberStatePayload, RoomPayload } from './schemas.js';
import {
  meetingMediaEvents as media,
  MeetingConsumerPreferences,
  MeetingMemberStateChanged,
  MeetingRoomJoin,
  MeetingRoomLeave,
} from './ws-protocol.js';

/**
 * A third of the default presence TTL (90 s → 30 s): a lease survives two lost refreshes.
 * Far under the records' 1 h TTL and the meeting's stale limit.
 */
export const DEFAULT_LIVE_REFRESH_MS = defaultMeetingSettings.presenceTtlMs / 3;

/** What the signalling uses of the hub. */
export type SignallingHub = Pick<WsHub, 'handle' | 'onSocketClosed' | 'followers'>;

export interface MeetingSignallingDeps {
  readonly hub: SignallingHub;
  readonly membership: MeetingMembership;
  readonly media: MediaServers;
  readonly state: RoomMediaState;
  readonly broadcaster: RoomBroadcaster;
  readonly logger: Logger;
  /** This node's `ROOMS_NODE_ID`: the key of its presence leases in each meeting. */
  readonly nodeId: string;
  /**
   * How often a followed meeting hears `socketLive` and its records' TTL restarts: well
   * within the meeting's presence TTL (a third of it), or live sockets' leases run out.
   */
  readonly liveRefreshMs?: number;
  /** Moves a meeting off a media server the directory lost (../../edge/room-media/media-handlers.ts). */
  readonly rescue?: (key: CellKey, from: string) => Promise<string | null>;
  /** Which node process holds what (../../edge/room-media/orphan-media.ts); absent: no cluster. */
  readonly holders?: MediaHolders;
  /** How much media a user may hold in a room, and a socket (../../edge/room-media/media-admission.ts). */
  readonly caps?: MediaCaps;
  /** TURN servers handed to every transport (`iceServers`); absent: none. */
  readonly turn?: TurnSettings | null;
  /** Whether clients may ask for plain RTP transports (`ROOMS_MEDIA_PLAIN_RTP`). */
  readonly plainRtp?: boolean;
}

/** Payloads as the hub parsed them with the events' declarations (./ws-protocol.ts). */
type Room = z.output<typeof RoomPayload>;
type ProducerClosePayload = z.output<typeof media.producerClose.payload>;
type MemberState = z.output<typeof MemberStatePayload>;

export class MeetingSignalling {
  private readonly logger: Logger;
  private readonly handlers: MediaHandlers;
  /**
   * Per user (app + id) on this node: the meetings one of its sockets joined, with the
   * media server each meeting's state records (where the user's media is released).
   */
  private readonly joined = new Map<
    string,
    { user: WsUser; meetings: Map<string, { key: CellKey; mediaServer: string | null }> }
  >();
  private readonly pending = new Set<Promise<void>>();
  /** Per (user, meeting): the tail of its presence notices (never rejects). */
  private readonly notices = new Map<string, Promise<void>>();
  private readonly refresh: NodeJS.Timeout;

  constructor(private readonly deps: MeetingSignallingDeps) {
    this.logger = deps.logger.child({ module: 'meeting-ws' });
    this.handlers = new MediaHandlers({
      ...deps,
      rules: meetingMediaRules(deps.membership, deps.state),
      logger: this.logger,
    });
    const h = this.handlers;
    // The seed's whitelist, each by its declaration: the hub refuses a bad payload first.
    const { hub } = deps;
    hub.handle(MeetingRoomJoin, (c, d) => this.join(c, d));
    hub.handle(MeetingRoomLeave, (c, d) => this.leave(c, d));
    hub.handle(MeetingMemberStateChanged, (c, d) => this.changeState(c, d));
    hub.handle(media.transportCreate, (c, d) => h.createTransport(c, d));
    hub.handle(media.transportConnect, (c, d) => h.connectTransport(c, d));
    hub.handle(media.plainTransportCreate, (c, d) => h.createPlainTransport(c, d));
    hub.handle(media.plainTransportConnect, (c, d) => h.connectPlainTransport(c, d));
    hub.handle(media.produceStart, (c, d) => h.produce(c, d));
    hub.handle(media.consumeStart, (c, d) => h.consume(c, d));
    hub.handle(media.producerClose, (c, d) => this.closeProducer(c, d));
    hub.handle(media.consumeResume, (c, d) => h.resume(c, d));
    hub.handle(MeetingConsumerPreferences, (c, d) => h.prefer(c, d));
    deps.hub.onSocketClosed((user, _rooms, _shuttingDown, socket) =>
      this.onSocketClosed(user, socket),
    );
    this.refresh = setInterval(
      () => this.keepLive(),
      deps.liveRefreshMs ?? DEFAULT_LIVE_REFRESH_MS,
    );
    this.refresh.unref();
  }

  /**
   * Releases a user's media in a meeting (for REST leave / kick / end, which the REST edge
   * calls): closes them on the media server, forgets them, announces closed producers.
   * `holder`: only what that dead node process's sockets made (../../edge/room-media/orphan-media.ts).
   */
  /**
   * `meeting.producer.close`: as for any room kind; a shared screen's close ends the
   * caller's share in the meeting (so another member may share).
   */
  private async closeProducer(context: WsContext, payload: ProducerClosePayload) {
    const { user } = context;
    const key: CellKey = { appCode: user.appCode, roomId: payload.room };
    const live = await this.deps.state.liveProducers(key);
    const closing = live.find(
      (p) => p.producerId === payload.producer_id && p.userId === user.userId,
    );
    const answer = await this.handlers.closeProducer(context, payload);
    if (closing?.source === 'screen') {
      await this.deps.membership.stopScreenShare(user.appCode, payload.room, user.userId);
    }
    return answer;
  }

  /**
   * A share taken over (the cell's `ScreenShareStopped` by another member): the old
   * sharer's screen producers close on `mediaServer`, are forgotten and announced closed.
   */
  async closeScreenOf(key: CellKey, userId: string, mediaServer: string | null): Promise<void> {
    const screens = (await this.deps.state.liveProducers(key)).filter(
      (p) => p.userId === userId && (p.source === 'screen' || p.source === 'screen_audio'),
    );
    const media = this.deps.media.of(mediaServer);
    for (const p of screens) {
      await media.closeProducer(p.producerId);
      await this.deps.state.forget(key, userId, { producers: [p.producerId] });
      this.handlers.announce(key, userId, p.producerId, p.kind, true, p.source);
    }
  }

  releaseUserMedia(
    key: CellKey,
    userId: string,
    mediaServer: string | null,
    holder?: string,
  ): Promise<void> {
    return this.handlers.release(key, userId, mediaServer, holder);
  }

  /** Stops the refresh and waits for the clean-ups of closed sockets. Idempotent. */
  async close(): Promise<void> {
    clearInterval(this.refresh);
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /**
   * `meeting.room.join {room_code}`: follow the meeting's channel (the participant row is
   * not touched), tell the meeting a socket is live, and right after the ACK send this
   * socket one `meeting.member.producer.new` per live producer of the other members. The
   * list is read after the follow, so a producer is announced at least once (possibly
   * twice: clients key producers by producer_id).
   */
  private async join(context: WsContext, { room_code }: Room) {
    const { user } = context;
    const key: CellKey = { appCode: user.appCode, roomId: room_code };
    const { mediaServer } = await this.deps.membership.member(user.appCode, room_code, user.userId);
    const wasFollowing = context.follows(key);
    await context.follow(key);
    try {
      await this.notify(user, key, 'live');
    } catch (error) {
      if (!wasFollowing) context.unfollow(key);
      throw error;
    }
    this.remember(user, key, mediaServer);
    // The socket closed while joining: its close found nothing to release yet.
    if (this.deps.hub.followers(user, key) === 0) this.goneIfUnfollowed(user);
    await this.deps.state.touch(key, user.userId);
    for (const p of await this.deps.state.liveProducers(key)) {
      if (p.userId === user.userId) continue;
      context.sendAfterAck(
        PRODUCER_NEW,
        producerFrame(room_code, p.userId, p.producerId, p.kind, false, p.source),
      );
    }
    return {};
  }

  /**
   * `meeting.room.leave {room_code}`: release the user's media, stop following, and
   * announce `meeting.member.left {room_code, user_id, reason: ws_leave}`. The participant
   * stays active (REST /leave leaves the meeting). Safe to repeat after a failure.
   */
  private async leave(context: WsContext, { room_code }: Room) {
    const { user } = context;
    const key: CellKey = { appCode: user.appCode, roomId: room_code };
    const { mediaServer } = await this.deps.membership.member(user.appCode, room_code, user.userId);
    await this.handlers.release(key, user.userId, mediaServer);
    context.unfollow(key);
    if (this.deps.hub.followers(user, key) === 0) {
      this.forgetJoin(user, key);
      await this.notify(user, key, 'gone');
    }
    const left: z.input<typeof WsLeftData> = {
      room_code,
      user_id: userIdJson(user.userId),
      reason: WS_LEAVE_REASON,
    };
    this.deps.broadcaster.toRoom(key, MEMBER_LEFT, left);
    return {};
  }

  /** `meeting.member.state.changed`: the meeting decides and broadcasts; this only ACKs. */
  private async changeState(context: WsContext, { room_code, ...change }: MemberState) {
    const { appCode, userId } = context.user;
    await this.deps.membership.member(appCode, room_code, userId);
    await this.deps.membership.changeState(appCode, room_code, userId, change);
    return {};
  }

  /**
   * A socket closed: what it made is released on the media server (whatever other sockets of
   * the user made stays theirs), and each meeting the user joined here that no socket of the
   * user on this node follows any more hears that this node's sockets are gone. The host
   * grace is the meeting's judgement across nodes (it starts only when no node holds a lease
   * of the host).
   */
  private onSocketClosed(user: WsUser, socket: object): void {
    const joinedOn = new Map(
      [...(this.joined.get(userKey(user))?.meetings.values() ?? [])].map(
        (m) => [routeKey(m.key), m.mediaServer] as const,
      ),
    );
    // The meeting may have moved to another media server since the join (failover).
    const serverOf = (key: CellKey) =>
      this.deps.membership
        .member(user.appCode, key.roomId, user.userId)
        .then((m) => m.mediaServer)
        .catch(() => joinedOn.get(routeKey(key)) ?? null);
    this.track(
      this.handlers
        .releaseSocket(socket, serverOf)
        .catch((err: unknown) =>
          this.logger.warn({ err, user_id: user.userId }, 'media release after disconnect failed'),
        ),
    );
    this.goneIfUnfollowed(user);
  }

  /** Tells each meeting the user joined here that no socket of theirs here follows it. */
  private goneIfUnfollowed(user: WsUser): void {
    const entry = this.joined.get(userKey(user));
    if (!entry) return;
    for (const { key } of [...entry.meetings.values()]) {
      if (this.deps.hub.followers(user, key) > 0) continue;
      this.forgetJoin(user, key);
      this.track(
        this.notify(user, key, 'gone').catch((err: unknown) =>
          this.logger.warn(
            { err, room: key, user_id: user.userId },
            'socketsGone after disconnect failed',
          ),
        ),
      );
    }
  }

  /**
   * Meetings still followed hear socketLive (one command per (user, meeting) on this node);
   * records' TTLs restart. A failed round is made good by the next: the TTL spans three.
   */
  private keepLive(): void {
    for (const { user, meetings } of [...this.joined.values()]) {
      for (const { key } of [...meetings.values()]) {
        // Unfollowed without a leave (the meeting ended, the user was kicked): done.
        if (this.deps.hub.followers(user, key) === 0) {
          this.forgetJoin(user, key);
          continue;
        }
        // A notice still on its way (a slow owner): this round adds nothing to it.
        if (this.notices.has(noticeKey(user, key))) continue;
        this.track(
          Promise.all([
            this.notify(user, key, 'live'),
            this.deps.state.touch(key, user.userId),
          ]).then(
            () => undefined,
            (err: unknown) => this.logger.warn({ err, room: key }, 'meeting live refresh failed'),
          ),
        );
      }
    }
  }

  /**
   * Sends one presence notice of this node for (user, meeting), after the ones before it
   * have settled, so the meeting applies them in the order they were decided here.
   */
  private notify(user: WsUser, key: CellKey, notice: 'live' | 'gone'): Promise<void> {
    const id = noticeKey(user, key);
    const { membership, nodeId } = this.deps;
    const send = () =>
      notice === 'live'
        ? membership.socketLive(key.appCode, key.roomId, user.userId, nodeId)
        : membership.socketsGone(key.appCode, key.roomId, user.userId, nodeId);
    const before = this.notices.get(id);
    const sent = before ? before.then(send) : send();
    const tail = sent.catch(() => undefined);
    this.notices.set(id, tail);
    void tail.then(() => {
      if (this.notices.get(id) === tail) this.notices.delete(id);
    });
    return sent;
  }

  private track(work: Promise<void>): void {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  private remember(user: WsUser, key: CellKey, mediaServer: string | null): void {
    let entry = this.joined.get(userKey(user));
    if (!entry) {
      entry = { user, meetings: new Map() };
      this.joined.set(userKey(user), entry);
    }
    entry.meetings.set(routeKey(key), { key, mediaServer });
  }

  private forgetJoin(user: WsUser, key: CellKey): void {
    const entry = this.joined.get(userKey(user));
    if (!entry) return;
    entry.meetings.delete(routeKey(key));
    if (entry.meetings.size === 0) this.joined.delete(userKey(user));
  }
}

const userKey = (user: WsUser) => `${user.appCode}\u0000${user.userId}`;
const noticeKey = (user: WsUser, key: CellKey) => `${userKey(user)}\u0000${routeKey(key)}`;
