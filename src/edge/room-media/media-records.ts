/**
 * Keeps the media resource records true to the media server: a transport, producer or
 * consumer that closed there without the signalling closing it (its router closed, its
 * worker died, its transport closed with it, its ICE timed out) is forgotten, and a
 * recorded producer's close is announced to its room (`…producer.new {closed: true}`), so a
 * late joiner is never offered a producer that no longer exists and members drop its
 * consumers. Consumers and transports are forgotten by every node that follows the media
 * server (idempotent); a producer by the room's owner alone, which also announces it, so
 * nodes that all follow one shared media server neither race nor repeat it.
 */
import type { Logger } from 'pino';
import type { CellKey } from '../../cell/lease.js';
import type { MediaEvent } from '../../media-server/events.js';
import { parseMediaRoom, type MediaRoomKind } from '../../media-cluster/media-servers.js';
import { InFlight } from '../../shared/in-flight.js';
import type { RoomBroadcaster } from './media-call.js';
import type { RoomMediaRules, RoomMediaState } from './ports.js';

export interface MediaRecordsDeps {
  readonly state: RoomMediaState;
  /** Each media room kind's rules (how its producer announcements look). */
  readonly rules: Readonly<Partial<Record<MediaRoomKind, RoomMediaRules>>>;
  readonly broadcaster: RoomBroadcaster;
  /** Whether this node owns the room now. */
  readonly owns: (key: CellKey) => boolean;
  readonly logger: Logger;
  readonly sleep?: (ms: number) => Promise<void>;
}

const SIGNALLING_GRACE_MS = 500;
const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class MediaRecords {
  private readonly inFlight = new InFlight();

  constructor(private readonly deps: MediaRecordsDeps) {}

  /** The media event listener (never throws). */
  readonly onEvent = (event: MediaEvent): void => {
    if (!('room_code' in event) || !('peer_id' in event) || !event.peer_id) return;
    const room = parseMediaRoom(event.room_code);
    const rules = room ? this.deps.rules[room.kind] : undefined;
    if (!room || !rules) return;
    const userId = event.peer_id;
    let work: Promise<void>;
    switch (event.type) {
      case 'producer_closed':
        work = this.producerClosed(room.key, rules, userId, event.producer_id, event.kind);
        break;
      case 'consumer_closed':
        work = this.deps.state.forget(room.key, userId, { consumers: [event.consumer_id] });
        break;
      case 'transport_closed':
        work = this.deps.state.forget(room.key, userId, { transports: [event.transport_id] });
        break;
      default:
        return;
    }
    this.inFlight.track(work, (err: unknown) =>
      this.deps.logger.warn({ err, room: room.key }, 'forgetting a closed media resource failed'),
    );
  };

  /** Waits for the work in flight. */
  close(): Promise<void> {
    return this.inFlight.drain();
  }

  private async producerClosed(
    key: CellKey,
    rules: RoomMediaRules,
    userId: string,
    producerId: string,
    kind: 'audio' | 'video',
  ): Promise<void> {
    if (!this.deps.owns(key)) return;
    // A close the signalling made is forgotten and announced by it right after the media
    // server's answer: give it that moment, so such a close is not announced twice.
    await (this.deps.sleep ?? defaultSleep)(SIGNALLING_GRACE_MS);
    const held = await this.deps.state.resources(key, userId);
    // Closed through the signalling: already forgotten and announced there.
    if (!held.producers.some((p) => p.id === producerId)) return;
    await this.deps.state.forget(key, userId, { producers: [producerId] });
    this.deps.broadcaster.toRoom(
      key,
      rules.producerNewEvent,
      rules.producerFrame(key.roomId, userId, producerId, kind, true),
    );
  }
}
