/**
 * The media half of the meeting's signalling: transports, producers, consumers, and the
 * release of everything a user holds in a meeting. Every call re-checks that the caller is
 * an active participant, and only touches the caller's OWN resources, as recorded in
 * {@link MeetingMediaState} when they were created: the media server addresses resources by
 * id alone, so an id of someone else's (or of another meeting) must never reach it.
 */
import type { Logger } from 'pino';
import type { CellKey } from '../../cell/lease.js';
import type { MediaOrchestrator } from '../../meeting/media-orchestrator.js';
import { mediaRoomOf, type MediaServers } from '../../meeting/media-servers.js';
import { errors } from '../../shared/error-codes.js';
import type { WsContext } from '../ws/hub.js';
import {
  asMediaError,
  mediaCall,
  PRODUCER_NEW,
  producerFrame,
  type RoomBroadcaster,
} from './frames.js';
import type {
  MediaResourceIds,
  MeetingMediaState,
  MeetingMembership,
  ProducerRecord,
  TransportRecord,
} from './ports.js';
import {
  ConsumeResumePayload,
  ConsumeStartPayload,
  parsePayload,
  ProduceStartPayload,
  ProducerClosePayload,
  TransportConnectPayload,
  TransportCreatePayload,
} from './schemas.js';

export interface MediaHandlerDeps {
  readonly membership: MeetingMembership;
  /** Each meeting's media calls go to the server its state records. */
  readonly media: MediaServers;
  readonly state: MeetingMediaState;
  readonly broadcaster: RoomBroadcaster;
  readonly logger: Logger;
}

type Data = Readonly<Record<string, unknown>>;

export class MediaHandlers {
  constructor(private readonly deps: MediaHandlerDeps) {}

  /** `meeting.transport.create {room_code, direction}`; the socket must have joined. */
  async createTransport(context: WsContext, data: Data) {
    const { room_code, direction } = parsePayload(TransportCreatePayload, data);
    const { key, media } = await this.meeting(context, room_code);
    // Resources live as long as a socket follows the meeting: its close releases them.
    if (!context.follows(key)) throw errors.MEETING_NOT_JOINED();
    const userId = context.user.userId;
    const info = await mediaCall(() => media.createTransport(mediaRoomOf(key), direction, userId));
    await this.record(
      () => this.deps.state.addTransport(key, userId, { id: info.id, direction }),
      () => media.closeTransport(info.id),
    );
    return info;
  }

  /** `meeting.transport.connect {room_code, transport_id, dtls_parameters}`. */
  async connectTransport(context: WsContext, data: Data) {
    const { room_code, transport_id, dtls_parameters } = parsePayload(
      TransportConnectPayload,
      data,
    );
    const { key, media } = await this.meeting(context, room_code);
    await this.ownTransport(key, context.user.userId, transport_id);
    await mediaCall(() => media.connectTransport(transport_id, dtls_parameters));
    return {};
  }

  /** `meeting.produce.start`: on the caller's own send transport; announced to the room. */
  async produce(context: WsContext, data: Data) {
    const { room_code, transport_id, kind, rtp_parameters } = parsePayload(
      ProduceStartPayload,
      data,
    );
    const { key, media } = await this.meeting(context, room_code);
    const userId = context.user.userId;
    await this.ownTransport(key, userId, transport_id, 'send', 'meeting.produce.start');
    const producerId = await mediaCall(() =>
      media.createProducer(transport_id, kind, rtp_parameters),
    );
    await this.record(
      () => this.deps.state.addProducer(key, userId, { id: producerId, kind }),
      () => media.closeProducer(producerId),
    );
    this.deps.broadcaster.toRoom(
      key,
      PRODUCER_NEW,
      producerFrame(room_code, userId, producerId, kind, false),
    );
    return { producer_id: producerId };
  }

  /** `meeting.consume.start`: a live producer of this meeting, on the caller's recv transport. */
  async consume(context: WsContext, data: Data) {
    const { room_code, transport_id, producer_id, rtp_capabilities } = parsePayload(
      ConsumeStartPayload,
      data,
    );
    const { key, media } = await this.meeting(context, room_code);
    const userId = context.user.userId;
    await this.ownTransport(key, userId, transport_id, 'recv', 'meeting.consume.start');
    const live = await this.deps.state.liveProducers(key);
    if (!live.some((p) => p.producerId === producer_id)) throw errors.MEDIA_RESOURCE_NOT_FOUND();
    // The orchestrator creates consumers paused: the client resumes once its track is mounted.
    const consumer = await mediaCall(() =>
      media.createConsumer(transport_id, producer_id, rtp_capabilities),
    );
    await this.record(
      () => this.deps.state.addConsumer(key, userId, { id: consumer.id, producerId: producer_id }),
      () => media.closeConsumer(consumer.id),
    );
    return consumer;
  }

  /**
   * `meeting.producer.close`: the caller's own producer (closed twice = success, as on the
   * media server); someone else's is refused; an id nobody here holds is already closed.
   */
  async closeProducer(context: WsContext, data: Data) {
    const { room_code, producer_id } = parsePayload(ProducerClosePayload, data);
    const { key, media } = await this.meeting(context, room_code);
    const userId = context.user.userId;
    const held = await this.deps.state.resources(key, userId);
    const mine = held.producers.find((p) => p.id === producer_id);
    if (!mine) {
      const live = await this.deps.state.liveProducers(key);
      if (live.some((p) => p.producerId === producer_id)) {
        throw errors.MEETING_MEDIA_NOT_OWNED('producer');
      }
      return {};
    }
    await mediaCall(() => media.closeProducer(producer_id));
    await this.deps.state.forget(key, userId, { producers: [producer_id] });
    this.deps.broadcaster.toRoom(
      key,
      PRODUCER_NEW,
      producerFrame(room_code, userId, producer_id, mine.kind, true),
    );
    return {};
  }

  /** `meeting.consume.resume {consumer_id}`: the caller's own consumer; no broadcast. */
  async resume(context: WsContext, data: Data) {
    const { consumer_id } = parsePayload(ConsumeResumePayload, data);
    const { appCode, userId } = context.user;
    const roomCode = await this.deps.state.consumerRoom(appCode, userId, consumer_id);
    if (roomCode === null) throw errors.MEETING_MEDIA_NOT_OWNED('consumer');
    const { media } = await this.meeting(context, roomCode);
    await mediaCall(() => media.resumeConsumer(consumer_id));
    return {};
  }

  /**
   * Closes everything the user holds in the meeting on the media server (producers first,
   * so the others' consumers of them go too, then consumers, then transports; each close
   * counts 404 as done) and forgets what was closed; announces each closed producer. What
   * failed to close stays recorded for the next attempt, and the first failure is thrown.
   */
  async release(key: CellKey, userId: string, mediaServer: string | null): Promise<void> {
    const held = await this.deps.state.resources(key, userId);
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
      held.consumers.map((c) => c.id),
      (id) => media.closeConsumer(id),
      closed.consumers,
    );
    await closeAll(
      held.transports.map((t) => t.id),
      (id) => media.closeTransport(id),
      closed.transports,
    );
    const ids: MediaResourceIds = {
      producers: closed.producers.map((p) => p.id),
      consumers: closed.consumers,
      transports: closed.transports,
    };
    await this.deps.state.forget(key, userId, ids);
    for (const p of closed.producers) {
      this.deps.broadcaster.toRoom(
        key,
        PRODUCER_NEW,
        producerFrame(key.roomId, userId, p.id, p.kind, true),
      );
    }
    if (failure !== null) throw asMediaError(failure);
  }

  /**
   * The meeting of this app, once the caller is an active participant of it, and the
   * orchestrator of the media server its state records.
   */
  private async meeting(
    context: WsContext,
    roomCode: string,
  ): Promise<{ key: CellKey; media: MediaOrchestrator; mediaServer: string | null }> {
    const { appCode, userId } = context.user;
    const { mediaServer } = await this.deps.membership.member(appCode, roomCode, userId);
    return {
      key: { appCode, roomId: roomCode },
      media: this.deps.media.of(mediaServer),
      mediaServer,
    };
  }

  /** The caller's transport of this meeting, of the direction `event` needs. */
  private async ownTransport(
    key: CellKey,
    userId: string,
    transportId: string,
    direction?: TransportRecord['direction'],
    event?: string,
  ): Promise<void> {
    const held = await this.deps.state.resources(key, userId);
    const transport = held.transports.find((t) => t.id === transportId);
    if (!transport) throw errors.MEETING_MEDIA_NOT_OWNED('transport');
    if (direction && transport.direction !== direction) {
      throw errors.MEDIA_WRONG_DIRECTION(event ?? 'this event', direction);
    }
  }

  /** Records a created resource; if that fails, closes it again so nothing leaks unrecorded. */
  private async record(write: () => Promise<void>, undo: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (error) {
      await undo().catch((err: unknown) =>
        this.deps.logger.warn({ err }, 'closing an unrecorded media resource failed'),
      );
      throw error;
    }
  }
}
