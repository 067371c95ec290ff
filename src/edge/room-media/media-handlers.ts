/**
 * The media signalling of every room kind: transports, producers, consumers, and the
 * release of everything a user holds in a room. The kind's {@link RoomMediaRules} say who
 * may use media and who may produce what; every call re-checks them against the room's
 * state, and only touches the caller's OWN resources, as recorded in {@link RoomMediaState}
 * when they were created: the media server addresses resources by id alone, so an id of
 * someone else's (or of another room) must never reach it.
 */
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { CellKey } from '../../cell/lease.js';
import {
  isMediaServerError,
  type MediaKind,
  type MediaOrchestrator,
} from '../../meeting/media-orchestrator.js';
import { mediaRoomOf, type MediaServers } from '../../meeting/media-servers.js';
import { errors } from '../../shared/error-codes.js';
import type { WsContext } from '../ws/hub.js';
import { asMediaError, mediaCall, type RoomBroadcaster } from './media-call.js';
import type {
  MediaHolders,
  MediaResourceIds,
  ProducerRecord,
  RoomMediaRules,
  RoomMediaState,
  TransportRecord,
} from './ports.js';
import { mediaPayloads, parsePayload, type MediaPayloads } from './schemas.js';

export interface MediaHandlerDeps {
  readonly rules: RoomMediaRules;
  /** How the kind's room ids look (checked before anything else). */
  readonly roomId: z.ZodString;
  /** Each room's media calls go to the server of the id its rules answer. */
  readonly media: MediaServers;
  readonly state: RoomMediaState;
  readonly broadcaster: RoomBroadcaster;
  readonly logger: Logger;
  /**
   * A call failed on the room's server: if the directory lost that server, move the room
   * (src/meeting/media-failover.ts) and answer the server it records now; else null.
   */
  readonly rescue?: (key: CellKey, from: string) => Promise<string | null>;
  /** Which node process holds what (a cluster's); absent: this process holds everything. */
  readonly holders?: MediaHolders;
}

type Data = Readonly<Record<string, unknown>>;

export class MediaHandlers {
  private readonly payloads: MediaPayloads;

  constructor(private readonly deps: MediaHandlerDeps) {
    this.payloads = mediaPayloads(deps.rules.roomField, deps.roomId);
  }

  /** `….transport.create {room, direction}`; the socket must follow the room. */
  async createTransport(context: WsContext, data: Data) {
    const payload = parsePayload(this.payloads.TransportCreate, data);
    const { direction } = payload;
    const room = await this.room(context, payload.room);
    const { key, media } = room;
    // Resources live as long as a socket follows the room: its close releases them.
    if (!context.follows(key)) throw this.deps.rules.notJoined();
    const userId = context.user.userId;
    const info = await this.call(room, () =>
      media.createTransport(mediaRoomOf(key, this.deps.rules.kind), direction, userId),
    );
    await this.record(
      () => this.deps.state.addTransport(key, userId, { id: info.id, direction }),
      () => media.closeTransport(info.id),
      room,
      userId,
    );
    return info;
  }

  /** `….transport.connect {room, transport_id, dtls_parameters}`. */
  async connectTransport(context: WsContext, data: Data) {
    const payload = parsePayload(this.payloads.TransportConnect, data);
    const { transport_id, dtls_parameters } = payload;
    const room = await this.room(context, payload.room);
    await this.ownTransport(room.key, context.user.userId, transport_id);
    await this.call(room, () => room.media.connectTransport(transport_id, dtls_parameters));
    return {};
  }

  /**
   * `….produce.start`: on the caller's own send transport, if the kind's rules let the
   * caller produce this kind now; announced to the room.
   */
  async produce(context: WsContext, data: Data) {
    const payload = parsePayload(this.payloads.ProduceStart, data);
    const { transport_id, kind, rtp_parameters } = payload;
    const roomId = payload.room;
    const room = await this.room(context, roomId);
    const { key, media } = room;
    const userId = context.user.userId;
    await this.ownTransport(key, userId, transport_id, 'send', this.event('produce.start'));
    const appData = await this.deps.rules.mayProduce(key.appCode, roomId, userId, kind);
    const producerId = await this.call(room, () =>
      media.createProducer(transport_id, kind, rtp_parameters, appData),
    );
    await this.record(
      () => this.deps.state.addProducer(key, userId, { id: producerId, kind }),
      () => media.closeProducer(producerId),
      room,
      userId,
    );
    this.announce(key, userId, producerId, kind, false);
    return { producer_id: producerId };
  }

  /** `….consume.start`: a live producer of this room, on the caller's recv transport. */
  async consume(context: WsContext, data: Data) {
    const payload = parsePayload(this.payloads.ConsumeStart, data);
    const { transport_id, producer_id, rtp_capabilities } = payload;
    const room = await this.room(context, payload.room);
    const { key, media } = room;
    const userId = context.user.userId;
    await this.ownTransport(key, userId, transport_id, 'recv', this.event('consume.start'));
    const live = await this.deps.state.liveProducers(key);
    if (!live.some((p) => p.producerId === producer_id)) throw errors.MEDIA_RESOURCE_NOT_FOUND();
    // The orchestrator creates consumers paused: the client resumes once its track is mounted.
    const consumer = await this.call(room, () =>
      media.createConsumer(transport_id, producer_id, rtp_capabilities),
    );
    await this.record(
      () => this.deps.state.addConsumer(key, userId, { id: consumer.id, producerId: producer_id }),
      () => media.closeConsumer(consumer.id),
      room,
      userId,
    );
    return consumer;
  }

  /**
   * `….producer.close`: the caller's own producer (closed twice = success, as on the
   * media server). An id the caller does not hold is, for the caller, already closed: `{}`
   * and nothing closes, whether or not someone else holds it (the answer never tells).
   */
  async closeProducer(context: WsContext, data: Data) {
    const payload = parsePayload(this.payloads.ProducerClose, data);
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
  async resume(context: WsContext, data: Data) {
    const { consumer_id } = parsePayload(this.payloads.ConsumeResume, data);
    const { appCode, userId } = context.user;
    const roomId = await this.deps.state.consumerRoom(appCode, userId, consumer_id);
    if (roomId === null) throw errors.MEDIA_RESOURCE_NOT_FOUND();
    const room = await this.room(context, roomId);
    await this.call(room, () => room.media.resumeConsumer(consumer_id));
    return {};
  }

  /**
   * Closes everything the user holds in the meeting on the media server (producers first,
   * so the others' consumers of them go too, then transports, whose consumers close with
   * them; each close counts 404 as done) and forgets what was closed; announces each closed
   * producer. A consumer lives on one of its user's own transports (consume checks it): once
   * every transport of the user closed, so did every consumer, with no call of its own (at 8
   * members, 7 calls fewer per leave). Otherwise (a holder's share only, or a transport that
   * did not close) each consumer is closed itself. What failed to close stays recorded for
   * the next attempt, and the first failure is thrown.
   * `holder`: only what that (dead) node process's sockets made.
   */
  async release(
    key: CellKey,
    userId: string,
    mediaServer: string | null,
    holder?: string,
  ): Promise<void> {
    const all = await this.deps.state.resources(key, userId);
    const mine = (r: { holder?: string | undefined }) =>
      holder === undefined || r.holder === holder;
    const held = {
      producers: all.producers.filter(mine),
      consumers: all.consumers.filter(mine),
      transports: all.transports.filter(mine),
    };
    // Most members who leave never used media: nothing to close, nothing to write.
    if (held.producers.length + held.consumers.length + held.transports.length === 0) {
      if (holder === undefined) await this.unhold(key, userId);
      return;
    }
    const media = this.deps.media.of(mediaServer);
    const closed: { producers: ProducerRecord[]; consumers: string[]; transports: string[] } = {
      producers: [],
      consumers: [],
      transports: [],
    };
    let failure: unknown = null;
    const closeAll = async <T>(
      items: readonly T[],
      close: (item: T) => Promise<void>,
      done: T[],
    ) => {
      const results = await Promise.allSettled(items.map((item) => close(item)));
      results.forEach((r, i) => {
        if (r.status === 'fulfilled') done.push(items[i]!);
        else failure ??= r.reason;
      });
    };
    await closeAll(held.producers, (p) => media.closeProducer(p.id), closed.producers);
    await closeAll(
      held.transports.map((t) => t.id),
      (id) => media.closeTransport(id),
      closed.transports,
    );
    const consumerIds = held.consumers.map((c) => c.id);
    const everyTransportClosed =
      holder === undefined &&
      held.transports.length > 0 &&
      closed.transports.length === held.transports.length;
    if (everyTransportClosed) closed.consumers.push(...consumerIds);
    else await closeAll(consumerIds, (id) => media.closeConsumer(id), closed.consumers);
    const ids: MediaResourceIds = {
      producers: closed.producers.map((p) => p.id),
      consumers: closed.consumers,
      transports: closed.transports,
    };
    await this.deps.state.forget(key, userId, ids);
    for (const p of closed.producers) this.announce(key, userId, p.id, p.kind, true);
    if (failure !== null) throw asMediaError(failure);
    if (holder === undefined) await this.unhold(key, userId);
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
  announce(key: CellKey, userId: string, producerId: string, kind: MediaKind, closed: boolean) {
    const { rules, broadcaster } = this.deps;
    broadcaster.toRoom(
      key,
      rules.producerNewEvent,
      rules.producerFrame(key.roomId, userId, producerId, kind, closed),
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

  /**
   * Records a created resource, and this process as a holder of the user's media in the
   * room (so that, should it die, another node releases it); if that fails, closes it again
   * so nothing leaks unrecorded.
   */
  private async record(
    write: () => Promise<void>,
    undo: () => Promise<void>,
    room: { key: CellKey; mediaServer: string | null },
    userId: string,
  ): Promise<void> {
    const { holders, rules } = this.deps;
    try {
      await Promise.all([write(), holders?.hold(rules.kind, room.key, userId, room.mediaServer)]);
    } catch (error) {
      await undo().catch((err: unknown) =>
        this.deps.logger.warn({ err }, 'closing an unrecorded media resource failed'),
      );
      throw error;
    }
  }
}
