/**
 * Publishes what a cell just committed to the realtime bus: the host calls `onCommitted`
 * right after each COMMIT, on the owner, in version order. Each event is mapped once by
 * its room kind and published once per room channel (one message per event, whatever the
 * number of members), plus one message per targeted user. Never throws, never awaits:
 * the commit path does not wait for the bus.
 */
import type { Logger } from 'pino';
import type { CommittedBatch } from '../cell/cell.js';
import { routeKey, type CellKey } from '../cell/lease.js';
import { roomChannel, userChannel, type RealtimeBus } from './bus.js';
import {
  END_FOLLOWS,
  genericFrames,
  roomEventFrame,
  type FrameLink,
  type FrameMapper,
  type UserMessage,
  type WsFrame,
} from './frames.js';
import { createRealtimeMetrics, type RealtimeMetrics } from './metrics.js';

/** Rooms whose previous frame version is remembered (oldest forgotten first). */
const CHAIN_LIMIT = 100_000;

export interface RealtimePublisherDeps {
  readonly bus: RealtimeBus;
  readonly logger: Logger;
  readonly metrics?: RealtimeMetrics;
  /** Frame mapping per room kind (`CellDomain.kind`); others use {@link genericFrames}. */
  readonly mappers?: Readonly<Record<string, FrameMapper>>;
}

export class RealtimePublisher {
  readonly metrics: RealtimeMetrics;
  private readonly logger: Logger;
  private readonly mappers = new Map<string, FrameMapper>();
  /** Per room: the last version committed here and the last frame published. */
  private readonly chain = new Map<string, { committed: number; framed: FrameLink | null }>();

  constructor(private readonly deps: RealtimePublisherDeps) {
    this.metrics = deps.metrics ?? createRealtimeMetrics();
    this.logger = deps.logger.child({ module: 'realtime' });
    for (const [kind, mapper] of Object.entries(deps.mappers ?? {})) this.mappers.set(kind, mapper);
  }

  /** Each room kind's frame mapping (a replay rebuilds frames with it). */
  get frameMappers(): ReadonlyMap<string, FrameMapper> {
    return this.mappers;
  }

  /** Plugs a room kind's mapping in (the voice room and meeting modules do). */
  registerMapper(kind: string, mapper: FrameMapper): void {
    this.mappers.set(kind, mapper);
  }

  /** The host's commit listener. */
  onCommitted(batch: CommittedBatch): void {
    const route = routeKey(batch.key);
    const start = (batch.entries[0]?.version ?? batch.version) - 1;
    const known = this.chain.get(route);
    // Versions committed elsewhere in between (the room moved away and back): unknown.
    let prev = known && known.committed === start ? known.framed : null;
    const mapper = this.mappers.get(batch.kind) ?? genericFrames;
    for (const envelope of batch.envelopes) {
      try {
        let roomFrames = 0;
        for (const out of mapper.toFrames(envelope)) {
          if (out.to === 'room') {
            // The frame chain (prev_event_id) needs one room frame per event at most.
            if (++roomFrames > 1) {
              this.logger.error(
                { kind: batch.kind, type: envelope.type },
                'extra room frame dropped',
              );
              continue;
            }
            const frame = roomEventFrame(envelope, out.event, out.data, prev);
            prev = { roomVersion: envelope.room_version, eventId: envelope.event_id };
            this.send('room', roomChannel(batch.key), frame);
            if (out.endsFollows) this.send('room', roomChannel(batch.key), END_FOLLOWS);
          } else {
            const message: UserMessage = {
              ...(out.event === null
                ? {}
                : {
                    frame: {
                      event: out.event,
                      data: out.data,
                      code: 0,
                      time: isoTime(envelope.occurred_at_ms),
                    },
                  }),
              ...(out.unfollowRoom
                ? { unfollow: { app_code: envelope.app_code, room_id: envelope.room_id } }
                : {}),
            };
            this.send('user', userChannel(envelope.app_code, out.userId), JSON.stringify(message));
          }
        }
      } catch (err) {
        this.logger.error({ err, room: batch.key }, 'frame mapping failed; event not pushed');
      }
    }
    this.chain.delete(route);
    if (this.chain.size >= CHAIN_LIMIT) this.chain.delete(this.chain.keys().next().value!);
    this.chain.set(route, { committed: batch.version, framed: prev });
  }

  /**
   * A frame to every socket following the room, from any node, that is NOT a committed cell
   * event (e.g. the meeting's media signalling): its `data` is sent as given, without
   * `room_version`, `event_id` or their `prev_*` links, and it does not move the room's
   * frame chain, so clients apply it outside their gap check. Frames one node publishes to
   * a room arrive in publish order; no order holds against the owner's cell frames.
   */
  toRoom(key: CellKey, event: string, data: Record<string, unknown>): void {
    const frame: WsFrame = { event, data, code: 0, time: isoTime(Date.now()) };
    this.send('room', roomChannel(key), JSON.stringify(frame));
  }

  /** A targeted message to every socket of a user, from any module (e.g. notifications). */
  toUser(appCode: string, userId: string, event: string, data: Record<string, unknown>): void {
    const message: UserMessage = { frame: { event, data, code: 0, time: isoTime(Date.now()) } };
    this.send('user', userChannel(appCode, userId), JSON.stringify(message));
  }

  private send(kind: 'room' | 'user', channel: string, payload: string): void {
    this.metrics.published.inc({ channel: kind });
    this.deps.bus.publish(channel, payload).catch((err: unknown) => {
      this.metrics.publishErrors.inc();
      this.logger.warn({ err, channel }, 'realtime publish failed');
    });
  }
}

function isoTime(ms: number): WsFrame['time'] {
  return new Date(ms).toISOString();
}
