/**
 * The voice room's media signalling on the `/ws` hub: the room-kind-agnostic media
 * handlers (../room-media) under `voice.*` names, with the voice room's rules, plus
 * `voice.media.join {room_id}`, which answers the room's router and the producers already
 * live (for `Device.load` and a late joiner's consumers). A socket follows the room with
 * `room.subscribe` first.
 *
 * The server decides who is heard. A seat's producer exists only while its holder has that
 * seat in `pending_publish` / `publishing` with the producer's `mic_session_id`:
 * {@link VoiceMediaSignalling.reconcile} closes every other producer of the room (and, for
 * a room no longer active, its router), and pauses the producer of a muted seat (禁麦),
 * resuming it once unmuted. It runs after each commit that ends a mic session, a presence
 * or changes a seat's mute, on the owner, and on every node every `reconcileMs` for every voice room
 * on its media servers, so a close the owner did not live to make is made within that
 * period. Closing twice is success (404 = done).
 */
import type { Logger } from 'pino';
import type { ReactionHandler } from '../../cell/reactions.js';
import type { CellKey } from '../../cell/lease.js';
import {
  isMediaResourceNotFound,
  isMediaServerError,
} from '../../media-cluster/media-orchestrator.js';
import {
  mediaRoomOf,
  parseMediaRoom,
  type MediaServers,
} from '../../media-cluster/media-servers.js';
import { PeriodicSweep } from '../../shared/periodic-sweep.js';
import type { RoomBroadcaster } from '../../edge/room-media/media-call.js';
import { mediaCall } from '../../edge/room-media/media-call.js';
import { MediaHandlers } from '../../edge/room-media/media-handlers.js';
import type { TurnSettings } from '../../edge/room-media/ice-servers.js';
import type { MediaCaps } from '../../edge/room-media/media-admission.js';
import type { MediaHolders, RoomMediaState } from '../../edge/room-media/ports.js';
import type { VoiceRoomApi } from '../api/voice-api.js';
import type { WsContext, WsHub } from '../../edge/ws/hub.js';
import type { z } from 'zod';
import { mediaServerOfRoom, speakingSeatOf, voiceMediaRules, voiceRoomOf } from './media-rules.js';
import { resetRoomMedia } from '../../edge/room-media/media-reset.js';
import { voiceMediaEvents as media, VoiceMediaJoin } from './ws-protocol.js';
import { userIdJson } from '../../shared/user-id.js';

/** Every voice room's producers are checked against its seats this often (every node). */
export const DEFAULT_RECONCILE_MS = 10_000;

export interface VoiceMediaSignallingDeps {
  readonly hub: Pick<WsHub, 'handle' | 'onSocketClosed' | 'followers'>;
  readonly api: VoiceRoomApi;
  readonly media: MediaServers;
  readonly state: RoomMediaState;
  readonly broadcaster: RoomBroadcaster;
  readonly logger: Logger;
  readonly reconcileMs?: number;
  /** The node's own media server: where rooms created before servers were recorded are. */
  readonly fallbackServer: string | null;
  /** Moves a room off a media server the directory lost (../../edge/room-media/media-handlers.ts). */
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

/** `voice.media.join`'s payload, as the hub parsed it with its declaration (./ws-protocol.ts). */
type JoinPayload = z.output<typeof VoiceMediaJoin.payload>;

export class VoiceMediaSignalling {
  private readonly logger: Logger;
  private readonly handlers: MediaHandlers;
  private readonly pending = new Set<Promise<unknown>>();
  private readonly sweep: PeriodicSweep;

  constructor(private readonly deps: VoiceMediaSignallingDeps) {
    this.logger = deps.logger.child({ module: 'voice-media' });
    this.handlers = new MediaHandlers({
      ...deps,
      rules: voiceMediaRules(deps.api, deps.fallbackServer),
      logger: this.logger,
    });
    const h = this.handlers;
    // Each by its declaration: the hub refuses a bad payload before the handler runs.
    const { hub } = deps;
    hub.handle(VoiceMediaJoin, (c, d) => this.join(c, d));
    hub.handle(media.transportCreate, (c, d) => h.createTransport(c, d));
    hub.handle(media.transportConnect, (c, d) => h.connectTransport(c, d));
    hub.handle(media.plainTransportCreate, (c, d) => h.createPlainTransport(c, d));
    hub.handle(media.plainTransportConnect, (c, d) => h.connectPlainTransport(c, d));
    hub.handle(media.produceStart, (c, d) => h.produce(c, d));
    hub.handle(media.consumeStart, (c, d) => h.consume(c, d));
    hub.handle(media.producerClose, (c, d) => h.closeProducer(c, d));
    hub.handle(media.consumeResume, (c, d) => h.resume(c, d));
    deps.hub.onSocketClosed((_user, _rooms, _shuttingDown, socket) => this.onSocketClosed(socket));
    this.sweep = new PeriodicSweep({
      intervalMs: deps.reconcileMs ?? DEFAULT_RECONCILE_MS,
      run: () => this.checkAllRooms(),
      logger: this.logger,
      what: 'checking voice rooms’ producers against their seats',
    });
  }

  start(): void {
    this.sweep.start();
  }

  /** Stops the sweep and waits for the work in flight. Idempotent. */
  async close(): Promise<void> {
    await this.sweep.stop();
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /**
   * What a voice room's commits make happen on its media server (../../cell/reactions.ts):
   * a voice that ended has its producer closed, a presence that ended its transports and
   * consumers, and a room moved to another media server its members told to start again.
   */
  reactionHandlers(): ReadonlyMap<string, ReactionHandler> {
    const { state, media, broadcaster } = this.deps;
    const reset = { state, media, broadcaster, logger: this.logger };
    return new Map<string, ReactionHandler>([
      ['voice_room.producers.reconcile', async (key) => void (await this.reconcile(key))],
      ['voice_room.member_media.release', (key, data) => this.release(key, String(data.user_id))],
      [
        'voice_room.media.reset',
        (key, data) =>
          resetRoomMedia(reset, 'voice_room', key, {
            to_server: String(data.to_server),
            user_ids: data.user_ids as readonly string[],
          }),
      ],
    ]);
  }

  /** What a dead node process's sockets made for the user in the room (orphan-media.ts). */
  releaseHeldBy(key: CellKey, userId: string, server: string | null, holder: string) {
    return this.handlers.release(key, userId, server, holder);
  }

  /** Releases everything the user holds in the room on `server` (a lost edge router's listener). */
  releaseOn(key: CellKey, userId: string, server: string) {
    return this.handlers.release(key, userId, server);
  }

  /** Releases what the user holds in the room, on the server the room records. */
  private async release(key: CellKey, userId: string): Promise<void> {
    const server = await mediaServerOfRoom(this.deps.api, key, this.deps.fallbackServer);
    await this.handlers.release(key, userId, server);
  }

  /**
   * `voice.media.join {room_id}`: a present member whose socket follows the room gets the
   * room's router (created once, on the media server) and the live producers of the others.
   */
  private async join(context: WsContext, { room_id }: JoinPayload) {
    const { user } = context;
    const key: CellKey = { appCode: user.appCode, roomId: room_id };
    const rules = voiceMediaRules(this.deps.api, this.deps.fallbackServer);
    const { mediaServer } = await rules.access(user.appCode, room_id, user.userId);
    if (!context.follows(key)) throw rules.notJoined();
    const name = mediaRoomOf(key, 'voice_room');
    let router;
    try {
      router = await mediaCall(() => this.deps.media.of(mediaServer).createRouter(name));
    } catch (error) {
      // A server the directory lost that the failover did not move this room off (no router
      // there at its last beat): moved now, and answered from the new server.
      const now =
        mediaServer !== null && isMediaServerError(error)
          ? await this.handlers.rescue(key, mediaServer)
          : null;
      if (now === null || now === mediaServer) throw error;
      router = await mediaCall(() => this.deps.media.of(now).createRouter(name));
    }
    const producers = (await this.deps.state.liveProducers(key))
      .filter((p) => p.userId !== user.userId)
      .map((p) => ({ user_id: userIdJson(p.userId), producer_id: p.producerId, kind: p.kind }));
    return { router_id: router.routerId, rtp_capabilities: router.rtpCapabilities, producers };
  }

  /**
   * Closes every producer of the room that is not its holder's current speaking session,
   * forgets it and announces it closed; a room no longer active loses its router too.
   * Resolves with how many producers it closed. `onlyWithProducers`: a room without
   * producers is not looked at (the periodic check must not keep idle rooms loaded).
   */
  async reconcile(key: CellKey, onlyWithProducers = false, serverId?: string): Promise<number> {
    const server =
      serverId ?? (await mediaServerOfRoom(this.deps.api, key, this.deps.fallbackServer));
    const media = this.deps.media.of(server);
    const name = mediaRoomOf(key, 'voice_room');
    let producers;
    try {
      producers = await media.listProducers(name);
    } catch (error) {
      if (isMediaResourceNotFound(error)) return 0; // no router: nothing to close
      throw error;
    }
    if (onlyWithProducers && producers.length === 0) return 0;
    const room = await voiceRoomOf(this.deps.api, key.appCode, key.roomId).catch(
      (error: unknown) => {
        // A room that does not exist (any more) keeps no media.
        if ((error as { code?: string }).code === 'ROOM_NOT_FOUND') return null;
        throw error;
      },
    );
    let closed = 0;
    for (const p of producers) {
      const userId = p.appData.user_id ?? p.peerId ?? '';
      const seat = room ? speakingSeatOf(room, userId) : null;
      if (seat && seat.mic_session_id === p.appData.mic_session_id) {
        // The current session's producer: paused while its seat is muted, else forwarded.
        if (seat.muted !== p.paused) await media.setProducerPaused(p.producerId, seat.muted);
        continue;
      }
      await media.closeProducer(p.producerId);
      await this.deps.state.forget(key, userId, { producers: [p.producerId] });
      this.handlers.announce(key, userId, p.producerId, p.kind, true);
      closed += 1;
    }
    if (!room || room.status !== 'active') await media.closeRouter(name);
    return closed;
  }

  /** Every voice room with a router on this node's media servers. */
  async checkAllRooms(): Promise<number> {
    let closed = 0;
    for (const serverId of this.deps.media.ids()) {
      for (const name of await this.deps.media.of(serverId).listRooms()) {
        const room = parseMediaRoom(name);
        if (room?.kind !== 'voice_room' || this.sweep.isStopped) continue;
        closed += await this.reconcile(room.key, true, serverId).catch((err: unknown) => {
          this.logger.warn({ err, room: room.key }, 'checking a voice room’s producers failed');
          return 0;
        });
      }
    }
    return closed;
  }

  /**
   * A socket closed: what it made is closed on the media server and forgotten; what the same
   * user made through another socket (a reconnect noticed first, another node) stays.
   */
  private onSocketClosed(socket: object): void {
    const { api, fallbackServer } = this.deps;
    this.track(
      this.handlers.releaseSocket(socket, (key) => mediaServerOfRoom(api, key, fallbackServer)),
    );
  }

  private track(work: Promise<unknown>): void {
    const quiet = work.catch((err: unknown) =>
      this.logger.warn({ err }, 'closing voice media failed'),
    );
    this.pending.add(quiet);
    void quiet.finally(() => this.pending.delete(quiet));
  }
}
