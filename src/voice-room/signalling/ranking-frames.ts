/**
 * `voice.ranking.changed`: the top of a room's four gift rankings (contribution and charm,
 * today and all time), sent to the room's followers after its gifts commit, at most once per
 * room per interval (1 s): the first gift after a quiet interval at once, the gifts within an
 * interval together at its end. Fed by the owner's commits (the host's commit listener), so
 * one node sends it. Like `voice.audience`, it is outside the room's frame chain: a snapshot
 * read from the database after the commit, not an event; a lost one is corrected by the next,
 * and `GET …/rankings` is the rankings' record.
 */
import type { Logger } from 'pino';
import type { CommittedBatch } from '../../cell/cell.js';
import { routeKey, type CellKey } from '../../cell/lease.js';
import type { RoomBroadcaster } from '../../edge/room-media/media-call.js';
import type { Clock } from '../../shared/clock.js';
import { userIdJson } from '../../shared/user-id.js';
import type { RankingEntry, VoiceRoomStore } from '../api/voice-store.js';
import type { VoiceRoomEvent } from '../domain/types.js';

export const VOICE_RANKING_CHANGED = 'voice.ranking.changed';
/** Entries per board in the frame. */
export const RANKING_FRAME_TOP = 10;
const INTERVAL_MS = 1_000;

interface RoomRankings {
  readonly key: CellKey;
  /** A gift committed since the last frame was read. */
  pending: boolean;
  /** Runs for an interval after each frame: gifts meanwhile wait for its end. */
  timer: NodeJS.Timeout | null;
}

export class RankingFrames {
  readonly #rooms = new Map<string, RoomRankings>();
  readonly #sending = new Set<Promise<void>>();

  constructor(
    private readonly deps: {
      readonly store: Pick<VoiceRoomStore, 'rankings'>;
      readonly broadcaster: RoomBroadcaster;
      readonly clock: Clock;
      readonly logger: Logger;
      readonly intervalMs?: number;
    },
  ) {}

  /** The host's commit listener (voice rooms only; never throws). */
  onCommitted(batch: CommittedBatch): void {
    if (batch.kind !== 'voice_room') return;
    const gifted = batch.entries.some((entry) =>
      (entry.events as readonly VoiceRoomEvent[]).some((e) => e.type === 'GiftSent'),
    );
    if (!gifted) return;
    const route = routeKey(batch.key);
    const room = this.#rooms.get(route) ?? { key: batch.key, pending: false, timer: null };
    this.#rooms.set(route, room);
    room.pending = true;
    if (!room.timer) this.#send(route, room);
  }

  /** Stops the timers (rankings not sent yet are dropped) and waits for reads in flight. */
  async close(): Promise<void> {
    for (const room of this.#rooms.values()) if (room.timer) clearTimeout(room.timer);
    this.#rooms.clear();
    await Promise.allSettled([...this.#sending]);
  }

  #send(route: string, room: RoomRankings): void {
    if (!room.pending) return;
    room.pending = false;
    const sending = this.#announce(room.key)
      .catch((err: unknown) =>
        this.deps.logger.warn({ err, room: room.key }, 'reading the rankings for a frame failed'),
      )
      .finally(() => this.#sending.delete(sending));
    this.#sending.add(sending);
    // Forgotten once quiet for an interval, so the map holds only rooms with gifts.
    room.timer = setTimeout(() => {
      room.timer = null;
      if (room.pending) this.#send(route, room);
      else this.#rooms.delete(route);
    }, this.deps.intervalMs ?? INTERVAL_MS);
    room.timer.unref();
  }

  async #announce(key: CellKey): Promise<void> {
    const { store, clock } = this.deps;
    const now = clock.nowMs();
    const top = (board: 'contribution' | 'charm', period: 'day' | 'all') =>
      store.rankings(key.appCode, key.roomId, board, period, RANKING_FRAME_TOP, now);
    const [contributionDay, contributionAll, charmDay, charmAll] = await Promise.all([
      top('contribution', 'day'),
      top('contribution', 'all'),
      top('charm', 'day'),
      top('charm', 'all'),
    ]);
    this.deps.broadcaster.toRoom(key, VOICE_RANKING_CHANGED, {
      room_id: key.roomId,
      day: contributionDay.day,
      contribution: {
        day: entriesJson(contributionDay.entries),
        all: entriesJson(contributionAll.entries),
      },
      charm: { day: entriesJson(charmDay.entries), all: entriesJson(charmAll.entries) },
    });
  }
}

function entriesJson(entries: readonly RankingEntry[]) {
  return entries.map((e, i) => ({
    rank: i + 1,
    user_id: userIdJson(e.user_id),
    user_name: e.user_name,
    total: e.total,
  }));
}
