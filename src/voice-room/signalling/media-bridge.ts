/**
 * Relays a media server's events into the voice rooms: each event ../api/media-events.ts
 * maps becomes the seed's RTC command, sent like any call (to the room's owner, forwarded
 * once), retried a few times while the owner is moving; and the audio levels of a room's
 * seats become `voice.speakers` frames (published by the room's owner only, so nodes that
 * all follow one media server do not repeat them). Speaker frames are never commands.
 */
import type { Logger } from 'pino';
import type { CellKey } from '../../cell/lease.js';
import type { MediaEvent } from '../../media-server/events.js';
import { parseMediaRoom } from '../../media-cluster/media-servers.js';
import { AppError } from '../../shared/errors.js';
import type { RoomBroadcaster } from '../../edge/room-media/media-call.js';
import { rtcCallOf } from '../api/media-events.js';
import type { VoiceRoomApi } from '../api/voice-api.js';
import { voiceRoomOf, type VoiceRoomMediaView } from './media-rules.js';
import { userIdText } from '../../shared/user-id.js';
import type { z } from 'zod';
import type { SpeakersData } from './ws-protocol.js';

export const VOICE_SPEAKERS = 'voice.speakers';

/** Pauses before the retries of a command the owner could not take yet. */
const RETRY_MS = [100, 500, 2_000];
/** How long a room's seats are reused for speaker frames. */
const SEATS_TTL_MS = 2_000;

export interface VoiceMediaBridgeDeps {
  readonly api: VoiceRoomApi;
  readonly broadcaster: RoomBroadcaster;
  /**
   * The id of the media server whose events these are when the listener is not told
   * (part of each request id).
   */
  readonly serverId: string;
  /** Whether this node owns the room now (speaker frames come from the owner only). */
  readonly owns: (key: CellKey) => boolean;
  readonly logger: Logger;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

export class VoiceMediaBridge {
  private readonly logger: Logger;
  private readonly seats = new Map<string, { at: number; room: Promise<VoiceRoomMediaView> }>();
  private readonly pending = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly deps: VoiceMediaBridgeDeps) {
    this.logger = deps.logger.child({ module: 'voice-media-bridge' });
  }

  /** The media event listener (never throws); `serverId`: the server it came from. */
  readonly onEvent = (event: MediaEvent, serverId = this.deps.serverId): void => {
    if (this.closed) return;
    if (event.type === 'audio_levels' || event.type === 'silence') {
      this.track(this.speakers(event));
      return;
    }
    const call = rtcCallOf(event, serverId);
    if (call) this.track(this.send(call.method, call.request));
  };

  /** Stops taking events and waits for the calls in flight. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private async send(method: Parameters<VoiceRoomApi['call']>[0], request: object) {
    const sleep = this.deps.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    for (let attempt = 0; ; attempt++) {
      try {
        await this.deps.api.call(method, request);
        return;
      } catch (error) {
        const retryable = error instanceof AppError && error.kind === 'unavailable';
        if (!retryable || attempt >= RETRY_MS.length || this.closed) {
          this.logger.info({ err: error, method, request }, 'media event not applied');
          return;
        }
        await sleep(RETRY_MS[attempt]!);
      }
    }
  }

  private async speakers(event: Extract<MediaEvent, { type: 'audio_levels' | 'silence' }>) {
    const room = parseMediaRoom(event.room_code);
    if (room?.kind !== 'voice_room' || !this.deps.owns(room.key)) return;
    const levels = event.type === 'audio_levels' ? event.volumes : [];
    const seats = levels.length > 0 ? (await this.seatsOf(room.key)).seats : [];
    const speakers = levels.flatMap((v) => {
      const userId = v.app_data.user_id;
      const seat = seats.find(
        (s) =>
          s.user_id !== null &&
          userIdText(s.user_id) === userId &&
          s.mic_session_id === v.app_data.mic_session_id,
      );
      // A seat matched, so the id is its holder's (a producer without one matches none).
      return seat?.user_id
        ? [{ user_id: seat.user_id, seat_index: seat.seat_index, volume: v.volume }]
        : [];
    });
    const data: z.input<typeof SpeakersData> = { room_id: room.key.roomId, speakers };
    this.deps.broadcaster.toRoom(room.key, VOICE_SPEAKERS, data);
  }

  /** The room's seats, read at most every SEATS_TTL_MS. */
  private seatsOf(key: CellKey): Promise<VoiceRoomMediaView> {
    const now = (this.deps.now ?? Date.now)();
    const id = `${key.appCode}\n${key.roomId}`;
    const cached = this.seats.get(id);
    if (cached && now - cached.at < SEATS_TTL_MS) return cached.room;
    const room = voiceRoomOf(this.deps.api, key.appCode, key.roomId);
    if (this.seats.size > 10_000) this.seats.clear();
    this.seats.set(id, { at: now, room });
    room.catch(() => this.seats.delete(id));
    return room;
  }

  private track(work: Promise<void>): void {
    const quiet = work.catch((err: unknown) =>
      this.logger.warn({ err }, 'relaying a media event failed'),
    );
    this.pending.add(quiet);
    void quiet.finally(() => this.pending.delete(quiet));
  }
}
