/**
 * After a room's router moved off a dead media server (a committed `MediaServerMoved`, on
 * the room's owner): the records of what its members held there are forgotten (those
 * transports, producers and consumers died with the server), the router is made on the new
 * server, and every socket following the room gets the kind's reset frame
 * (`meeting.media.reset {room_code, …}`, `voice.media.reset {room_id, …}`, docs/protocol.md):
 * drop every transport, producer and consumer, load the new router's `rtp_capabilities`
 * and create them again (a meeting re-joins with `meeting.room.join`, a voice room with
 * `voice.media.join`, which list the producers already made again).
 */
import type { Logger } from 'pino';
import { z } from 'zod';
import type { CellKey } from '../../cell/lease.js';
import type { MediaOrchestrator } from '../../media-cluster/media-orchestrator.js';
import { mediaRoomOf, type MediaRoomKind } from '../../media-cluster/media-servers.js';
import type { RoomBroadcaster } from './media-call.js';
import type { RoomMediaState } from './ports.js';

export interface MediaResetDeps {
  readonly state: Pick<RoomMediaState, 'clear' | 'liveProducers'>;
  /** Each server's orchestrator; only its router is made here. */
  readonly media: { of(server: string | null): Pick<MediaOrchestrator, 'createRouter'> };
  readonly broadcaster: RoomBroadcaster;
  readonly logger: Logger;
}

/** A reset frame's data besides the room (its key is the kind's, below). */
const ResetFields = z.strictObject({
  media_server: z.string().describe('The media server the room’s router is on now'),
  router_id: z.string().nullable().describe('null: the router could not be made yet'),
  rtp_capabilities: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe('The new router’s RTP capabilities, for a new Device'),
});

/** The reset frame's data of a kind whose rooms are named by `roomField`. */
function resetData(roomField: string) {
  return ResetFields.extend({ [roomField]: z.string() });
}

/** The kinds' reset frames, the payload key of their room, and their declared data. */
export const MEDIA_RESET_FRAMES: Readonly<
  Record<
    MediaRoomKind,
    { readonly event: string; readonly roomField: string; readonly data: z.ZodObject }
  >
> = {
  meeting: { event: 'meeting.media.reset', roomField: 'room_code', data: resetData('room_code') },
  voice_room: { event: 'voice.media.reset', roomField: 'room_id', data: resetData('room_id') },
};

/** The move of `key`'s router to `toServer` committed: forget, re-create, tell the members. */
export async function resetRoomMedia(
  deps: MediaResetDeps,
  kind: MediaRoomKind,
  key: CellKey,
  moved: { readonly to_server: string; readonly user_ids: readonly string[] },
): Promise<void> {
  const log = deps.logger.child({ room: key, kind, to: moved.to_server });
  const users = new Set(moved.user_ids);
  for (const p of await deps.state.liveProducers(key)) users.add(p.userId);
  await Promise.all([...users].map((userId) => deps.state.clear(key, userId)));
  let router: { routerId: string; rtpCapabilities: Record<string, unknown> } | null = null;
  try {
    router = await deps.media.of(moved.to_server).createRouter(mediaRoomOf(key, kind));
  } catch (err) {
    // The members still hear of the move: their re-join makes the router (or says why not).
    log.warn({ err }, 'creating the moved router failed');
  }
  const { event, roomField } = MEDIA_RESET_FRAMES[kind];
  const fields: z.input<typeof ResetFields> = {
    media_server: moved.to_server,
    router_id: router?.routerId ?? null,
    rtp_capabilities: router?.rtpCapabilities ?? null,
  };
  deps.broadcaster.toRoom(key, event, { [roomField]: key.roomId, ...fields });
  log.info({ members: users.size }, 'room media moved; members told to re-create it');
}
