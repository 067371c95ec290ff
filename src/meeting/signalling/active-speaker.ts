/**
 * `meeting.active_speaker {room_code, user_id}`: the media server's active-speaker
 * observer of each meeting router (one per router, src/media-server/speakers.ts) names the
 * dominant audio producer when it changes (every 300 ms at most); the node that owns the
 * meeting tells its followers whose it is, once per change. Outside the frame chain (a
 * hint for the speaker view, not an event): a lost one is corrected by the next.
 */
import { z } from 'zod';
import type { CellKey } from '../../cell/lease.js';
import type { RoomBroadcaster } from '../../edge/room-media/media-call.js';
import { parseMediaRoom } from '../../media-cluster/media-servers.js';
import type { MediaEvent } from '../../media-server/events.js';
import { isUserIdText, JsonUserId, userIdJson } from '../../shared/user-id.js';

export const ACTIVE_SPEAKER = 'meeting.active_speaker';
export const ActiveSpeakerData = z.strictObject({
  room_code: z.string().describe('XXX-XXX-XXX'),
  user_id: JsonUserId.describe('Whose microphone the media server hears loudest now'),
});

export class MeetingActiveSpeaker {
  /** The last speaker told, per meeting (a room that ends is forgotten past 10,000). */
  readonly #last = new Map<string, string>();

  constructor(
    private readonly deps: {
      readonly owns: (key: CellKey) => boolean;
      readonly broadcaster: RoomBroadcaster;
    },
  ) {}

  /** The media event listener (never throws). */
  readonly onEvent = (event: MediaEvent): void => {
    if (event.type !== 'dominant_speaker') return;
    const room = parseMediaRoom(event.room_code);
    if (room?.kind !== 'meeting' || !this.deps.owns(room.key)) return;
    // A meeting producer's peer is its member (the signalling sets it).
    const userId = event.peer_id;
    if (!isUserIdText(userId)) return;
    const id = `${room.key.appCode}\n${room.key.roomId}`;
    if (this.#last.get(id) === userId) return;
    if (this.#last.size > 10_000) this.#last.clear();
    this.#last.set(id, userId);
    const data: z.input<typeof ActiveSpeakerData> = {
      room_code: room.key.roomId,
      user_id: userIdJson(userId),
    };
    this.deps.broadcaster.toRoom(room.key, ACTIVE_SPEAKER, data);
  };
}
