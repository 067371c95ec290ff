/**
 * The media signalling of every room kind: transports, producers, consumers, and the
 * release of everything a user holds in a room. The kind's {@link RoomMediaRules} say who
 * may use media and who may produce what; every call re-checks them against the room's
 * state, and only touches the caller's OWN resources, as recorded in {@link RoomMediaState}
 * when they were created: the media server addresses resources by id alone, so an id of
 * someone else's (or of another room) must never reach it.
 */
import { layerForWidth } from './layers.js';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { CellKey } from '../../cell/lease.js';
import {
  isMediaServerError,
  type MediaKind,
  type MediaOrchestrator,
} from '../../media-cluster/media-orchestrator.js';
import { mediaRoomOf, type MediaServers } from '../../media-cluster/media-servers.js';
import { errors } from '../../shared/error-codes.js';
import type { WsContext } from '../ws/hub.js';
import { closeHeld } from './close-held.js';
import { keepMade, unmake } from './keep-made.js';
import { iceServersFor, type TurnSettings } from './ice-servers.js';
import { DEFAULT_MEDIA_CAPS, MediaAdmission, type MediaCaps } from './media-admission.js';
import { asMediaError, mediaCall, type RoomBroadcaster } from './media-call.js';
import {
  defaultSource,
  type MediaHolders,
  type MediaResourceIds,
  type ProducerSource,
  type RoomMediaRules,
  type RoomMediaState,
  type TransportRecord,
  type UserMediaResources,
} from './ports.js';
import type { MediaPayloads } from './schemas.js';

/** A media event's payload as its declaration parsed it (./ws-events.ts; the hub parses). */
type Payload<K extends keyof MediaPayloads> = z.output<MediaPayloads[K]>;

export interface MediaHandlerDeps {
  readonly rules: RoomMediaRules;
  /** Each room's media calls go to the server of the id its rules answer. */
  readonly media: MediaServers;
  readonly state: RoomMediaState;
  readonly broadcaster: RoomBroadcaster;
  readonly logger: Logger;
  /**
   * A call failed on the room's server: if the directory lost that server, move the room
   * (src/media-cluster/media-failover.ts) and answer the server it records now; else null.
   */
  readonly rescue?: (key: CellKey, from: string) => Promise<string | null>;
  /** Which node process holds what (a cluster's); absent: this process holds everything. */
  readonly holders?: MediaHolders;
  /** How much a user may hold in a room, and a socket (default {@link DEFAULT_MEDIA_CAPS}). */
  readonly caps?: MediaCaps;
  /** TURN servers handed to every transport (`iceServers`); absent: none. */
  readonly turn?: TurnSettings | null;
  /** Whether clients may ask for plain RTP transports (`ROOMS_MEDIA_PLAIN_RTP`). */
  readonly plainRtp?: boolean;
}

export class MediaHandlers {
  private readonly admission: MediaAdmission;

  constructor(private readonly deps: MediaHandlerDeps) {
    this.admission = new MediaAdmission({
      state: deps.state,
      caps: deps.caps ?? DEFAULT_MEDIA_CAPS,
    });
  }

  /**
   * `….transport.create {room, direction}`: a WebRTC transport, with the TURN servers the
   * client may relay through.
   */
  createTransport(context: WsContext, payload: Payload<'TransportCreate'>) {
    const userId = context.user.userId;
    return this.openTransport(context, payload, async (media, mediaRoom) => ({
      ...(await media.createTransport(mediaRoom, payload.direction, userId)),
      iceServers: iceServersFor(this.deps.turn ?? null, userId),
    }));
  }

  /**
   * `….transport.plain.create {room, direction}`: a plain RTP transport on the media
   * server's loopback, for a client on that host; refused unless the deployment turned
   * plain RTP on. Counted, recorded and released like a WebRTC one.
   */
  createPlainTransport(context: WsContext, payload: Payload<'TransportCreate'>) {
    if (!this.deps.plainRtp) throw errors.MEDIA_PLAIN_RTP_OFF();
    return this.openTransport(context, payload, (media, mediaRoom) =>
      media.createPlainTransport(mediaRoom, payload.direction, context.user.userId),
    );
  }

  /**
   * A transport of the caller's in the room, made by `make`; the socket must follow the
   * room. Like every creation, counted against the caps (./media-admission.ts) and checked
   * again once recorded (./keep-made.ts).
   */
  private async openTransport<T extends { id: string }>(
    context: WsContext,
    payload: Payload<'TransportCreate'>,
    make: (media: MediaOrchestrator, mediaRoom: string) => Promise<T>,
  ): Promise<T> {
    const { direction } = payload;
    const room = await this.room(context, payload.room);
    const { key, media } = room;
    // Resources live as long as a socket follows the room: its close releases them.
    if (!context.follows(key)) throw this.deps.rules.notJoined();
    const userId = context.user.userId;
    return this.admission.admit(context.socket, key, userId, 'transports', {
      create: async () => {
        const info = await this.call(room, () =>
          make(media, mediaRoomOf(key, this.deps.rules.kind)),
        );
        await keepMade(
          this.deps,
          room,
          userId,
          () => this.deps.state.addTransport(key, userId, { id: info.id, direction }),
          { transports: [info.id] },
          () => media.closeTransport(info.id),
        );
        return info;
      },
      idOf: (info) => info.id,
      undo: (info) =>
        unmake(this.deps, key, userId, { transports: [info.id] }, () =>
          media.closeTransport(info.id),
        ),
    });
  }

  /** `….transport.connect {room, transport_id, dtls_parameters}`. */
  async connectTransport(context: WsContext, payload: Payload<'TransportConnect'>) {
    const { transport_id, dtls_parameters } = payload;
    const room = await this.room(context, payload.room);
    await this.ownTransport(room.key, context.user.userId, transport_id);
    await this.call(room, () => room.media.connectTransport(transport_id, dtls_parameters));
    return {};
  }

  /** `….transport.plain.connect {room, transport_id, ip, port}`: where a plain recv one sends. */
  async connectPlainTransport(context: WsContext, payload: Payload<'PlainTransportConnect'>) {
    if (!this.deps.plainRtp) throw errors.MEDIA_PLAIN_RTP_OFF();
    const { transport_id, ip, port } = payload;
    const room = await this.room(context, payload.room);
    await this.ownTransport(
      room.key,
      context.user.userId,
      transport_id,
      'recv',
      this.event('transport.plain.connect'),
    );
    await this.call(room, () => room.media.connectPlainTransport(transport_id, ip, port));
    return {};
  }

  /**
   * `….produce.start`: on the caller's own send transport, if the kind's rules let the
   * caller produce this kind now; announced to the room once recorded and checked again
   * (./keep-made.ts: a lost seat closes it unannounced too).
   */
  async produce(context: WsContext, payload: Payload<'ProduceStart'>) {
    const { transport_id, kind, rtp_parameters } = payload;
    const source = payload.source ?? defaultSource(kind);
    const roomId = payload.room;
    const room = await this.room(context, roomId);
    const { key, media } = room;
    const userId = context.user.userId;
    await this.ownTransport(key, userId, transport_id, 'send', this.event('produce.start'));
    const allowed = await this.deps.rules.mayProduce(key.appCode, roomId, userId, kind, source);
    const appData = { ...allowed, source };
    const producerId = await this.admission.admit(context.socket, key, userId, 'producers', {
      create: async () => {
        const id = await this.call(room, () =>
          media.createProducer(transport_id, kind, rtp_parameters, appData),
        );
        await keepMade(
          this.deps,
          room,
          userId,
          () => this.deps.state.addProducer(key, userId, { id, kind, source }),
          { producers: [id] },
          () => media.closeProducer(id),
          { kind, source },
        );
        return id;
      },
      idOf: (id) => id,
      undo: (id) =>
        unmake(this.deps, key, userId, { producers: [id] }, () => media.closeProducer(id)),
      admitted: (id) => this.announce(key, userId, id, kind, false, source),
    });
    return { producer_id: producerId };
  }

  /** `….consume.start`: a live producer of this room, on the caller's recv transport. */
  async consume(context: WsContext, payload: Payload<'ConsumeStart'>) {
    const { transport_id, producer_id, rtp_capabilities } = payload;
    const room = await this.room(context, payload.room);
    const { key, media } = room;
    const userId = context.user.userId;
    await this.ownTransport(key, userId, transport_id, 'recv', this.event('consume.start'));
    const live = await this.deps.state.liveProducers(key);
    if (!live.some((p) => p.producerId === producer_id)) throw errors.MEDIA_RESOURCE_NOT_FOUND();
    return this.admission.admit(context.socket, key, userId, 'consumers', {
      create: async () => {
        // The orchestrator creates consumers paused: the client resumes once its track is mounted.
        const consumer = await this.call(room, () =>
          media.createConsumer(transport_id, producer_id, rtp_capabilities),
        );
        await keepMade(
          this.deps,
          room,
          userId,
          () =>
            this.deps.state.addConsumer(key, userId, { id: consumer.id, producerId: producer_id }),
          { consumers: [consumer.id] },
          () => media.closeConsumer(consumer.id),
        );
        return consumer;
      },
      idOf: (consumer) => consumer.id,
      undo: (consumer) =>
        unmake(this.deps, key, userId, { consumers: [consumer.id] }, () =>
          media.closeConsumer(consumer.id),
        ),
    });
  }

  /**
   * `….producer.close`: the caller's own producer (closed twice = success, as on the
   * media server). An id the caller does not hold is, for the caller, already closed: `{}`
   * and nothing closes, whether or not someone else holds it (the answer never tells).
   */
  async closeProducer(context: WsContext, payload: Payload<'ProducerClose'>) {
    const { producer_id } = payload;
    const { key, media } = await this.room(context, payload.room);
    const userId = context.user.userId;
    const held = await this.deps.state.resources(key, userId);
    const mine = held.producers.find((p) => p.id === producer_id);
    if (!mine) return {};
    await mediaCall(() => media.closeProducer(producer_id));
    await this.deps.state.forget(key, userId, { producers: [producer_id] });
    this.announce(key, userId, producer_id, mine.kind, true);
    return {};
  }

  /**
   * `….consume.resume {consumer_id}`: the caller's own consumer; no broadcast. Any other id
   * (unknown, or someone else's) is 会议资源不存在: the answer never says which.
   */
  async resume(context: WsContext, payload: Payload<'ConsumeResume'>) {
    const { consumer_id } = payload;
    const { appCode, userId } = context.user;
    const roomId = await this.deps.state.consumerRoom(appCode, userId, consumer_id);
    if (roomId === null) throw errors.MEDIA_RESOURCE_NOT_FOUND();
    const room = await this.room(context, roomId);
    await this.call(room, () => room.media.resumeConsumer(consumer_id));
    return {};
  }

  /**
   * `….consumer.preferences`: the caller's own consumer (any other id: 会议资源不存在), its
   * simulcast layer (named, or the one a tile of `max_width` needs) and its pause.
   */
  async prefer(
    context: WsContext,
    payload: {
      consumer_id: string;
      spatial_layer?: number | undefined;
      max_width?: number | undefined;
      paused?: boolean | undefined;
    },
  ) {
    const { consumer_id, max_width } = payload;
    const { appCode, userId } = context.user;
    const roomId = await this.deps.state.consumerRoom(appCode, userId, consumer_id);
    if (roomId === null) throw errors.MEDIA_RESOURCE_NOT_FOUND();
    const room = await this.room(context, roomId);
    const spatialLayer = max_width === undefined ? payload.spatial_layer : layerForWidth(max_width);
    await this.call(room, () =>
      room.media.setConsumerPreferences(consumer_id, { spatialLayer, paused: payload.paused }),
    );
    return {};
  }

  /**
   * Closes everything the user holds in the room on the media server (./close-held.ts) and
   * forgets what was closed; announces each closed producer. What failed to close stays
   * recorded for the next attempt, and the first failure is thrown. `holder`: only what
   * that (dead) node process's sockets made.
   */
  async release(
    key: CellKey,
    userId: string,
    mediaServer: string | null,
    holder?: string,
  ): Promise<void> {
    // A dead holder's share: what this process makes meanwhile is not part of it.
    if (holder !== undefined) return this.releaseHeld(key, userId, mediaServer, holder);
    return this.admission.releasing(key, userId, () =>
      this.releaseHeld(key, userId, mediaServer, undefined),
    );
  }

  private releaseHeld(
    key: CellKey,
    userId: string,
    mediaServer: string | null,
    holder: string | undefined,
  ): Promise<void> {
    const mine = (r: { holder?: string | undefined }) =>
      holder === undefined || r.holder === holder;
    return this.releaseSome(key, userId, mediaServer, holder === undefined, {
      producers: mine,
      consumers: mine,
      transports: mine,
    }).then(() => (holder === undefined ? this.unhold(key, userId) : undefined));
  }

  /**
   * A socket closed: what it made, in every room of the kind, is closed on the room's media
   * server (`serverOf`) and forgotten, its producers announced closed. What the same user made
   * through another socket (a reconnect that came before this close was noticed, another
   * node) stays theirs.
   */
  releaseSocket(socket: object, serverOf: (key: CellKey) => Promise<string | null>) {
    return this.admission.socketClosed(socket, async ({ key, userId, ids }) => {
      const made = (slot: keyof typeof ids) => (r: { id: string }) => ids[slot].has(r.id);
      const server = await serverOf(key);
      await this.releaseSome(key, userId, server, false, {
        producers: made('producers'),
        consumers: made('consumers'),
        transports: made('transports'),
      });
    });
  }

  /**
   * Closes the user's records in the room that `pick` selects, forgets what closed and
   * announces closed producers; what failed stays recorded, and the first failure is thrown.
   * `whole`: every record of the user is picked (their consumers close with the transports).
   */
  private async releaseSome(
    key: CellKey,
    userId: string,
    mediaServer: string | null,
    whole: boolean,
    pick: { [S in keyof UserMediaResources]: (r: UserMediaResources[S][number]) => boolean },
  ): Promise<void> {
    const all = await this.deps.state.resources(key, userId);
    const held: UserMediaResources = {
      producers: all.producers.filter(pick.producers),
      consumers: all.consumers.filter(pick.consumers),
      transports: all.transports.filter(pick.transports),
    };
    // Most members who leave never used media: nothing to close, nothing to write.
    if (held.producers.length + held.consumers.length + held.transports.length === 0) return;
    const media = this.deps.media.of(mediaServer);
    const closed = await closeHeld(media, held, whole);
    const ids: MediaResourceIds = {
      producers: closed.producers.map((p) => p.id),
      consumers: closed.consumers,
      transports: closed.transports,
    };
    await this.deps.state.forget(key, userId, ids);
    for (const p of closed.producers) this.announce(key, userId, p.id, p.kind, true);
    if (closed.failure !== null) throw asMediaError(closed.failure);
  }

  /** The user's media in the room is released: this process no longer holds any there. */
  private async unhold(key: CellKey, userId: string): Promise<void> {
    await this.deps.holders
      ?.unhold(this.deps.rules.kind, key, userId)
      .catch((err: unknown) => this.deps.logger.warn({ err }, 'dropping a media hold failed'));
  }

  /**
   * One media call for the room. When it fails on a server the directory lost, the room is
   * moved first (its members get the kind's reset frame and make their media again on the
   * new server); the failure is answered as it is (会议媒体服务暂不可用, retryable).
   */
  private async call<T>(room: { key: CellKey; mediaServer: string | null }, run: () => Promise<T>) {
    try {
      return await mediaCall(run);
    } catch (error) {
      if (room.mediaServer !== null && isMediaServerError(error)) {
        await this.rescue(room.key, room.mediaServer);
      }
      throw error;
    }
  }

  /**
   * Moves the room off `from` if the directory lost that server; the server the room
   * records now, or null (not lost, or the move failed: logged, the caller's error stands).
   */
  async rescue(key: CellKey, from: string): Promise<string | null> {
    if (!this.deps.rescue) return null;
    return this.deps.rescue(key, from).catch((err: unknown) => {
      this.deps.logger.warn(
        { err, room: key, from },
        'moving a room off a lost media server failed',
      );
      return null;
    });
  }

  /** The kind's name of an event (`meeting.produce.start`, `voice.produce.start`). */
  private event(name: string): string {
    return `${this.deps.rules.eventPrefix}.${name}`;
  }

  /** Announces a producer opened or closed to the room. */
  announce(
    key: CellKey,
    userId: string,
    producerId: string,
    kind: MediaKind,
    closed: boolean,
    source?: ProducerSource,
  ) {
    const { rules, broadcaster } = this.deps;
    broadcaster.toRoom(
      key,
      rules.producerNewEvent,
      rules.producerFrame(key.roomId, userId, producerId, kind, closed, source),
    );
  }

  /**
   * The room of this app, once the kind's rules let the caller use media in it, and the
   * orchestrator of the media server the rules name.
   */
  private async room(
    context: WsContext,
    roomId: string,
  ): Promise<{ key: CellKey; media: MediaOrchestrator; mediaServer: string | null }> {
    const { appCode, userId } = context.user;
    const { mediaServer } = await this.deps.rules.access(appCode, roomId, userId);
    return {
      key: { appCode, roomId },
      media: this.deps.media.of(mediaServer),
      mediaServer,
    };
  }

  /**
   * The caller's transport of this room, of the direction `event` needs. Any other id
   * (unknown, another room's, or someone else's) is 会议资源不存在, as the seed answers an
   * unknown resource: whether someone else holds it is never told.
   */
  private async ownTransport(
    key: CellKey,
    userId: string,
    transportId: string,
    direction?: TransportRecord['direction'],
    event?: string,
  ): Promise<void> {
    const held = await this.deps.state.resources(key, userId);
    const transport = held.transports.find((t) => t.id === transportId);
    if (!transport) throw errors.MEDIA_RESOURCE_NOT_FOUND();
    if (direction && transport.direction !== direction) {
      throw errors.MEDIA_WRONG_DIRECTION(event ?? 'this event', direction);
    }
  }
}
