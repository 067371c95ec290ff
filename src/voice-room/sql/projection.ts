/**
 * The `rooms` and `room_list_entries` rows of a voice room, written in the cell's commit
 * transaction: inserted by the batch that creates the room, updated by later batches.
 */
import type { Compilable, QueryCreator } from 'kysely';
import type { DecidedEntry } from '../../cell/domain.js';
import type { CellKey } from '../../cell/lease.js';
import { presentCount } from '../domain/presence-book.js';
import type { VoiceRoomCommand, VoiceRoomEvent, VoiceRoomState } from '../domain/types.js';
import type { Database } from '../../adapters/sql/schema.js';

export function projectVoiceRoom(
  db: QueryCreator<Database>,
  key: CellKey,
  state: VoiceRoomState,
  entries: readonly DecidedEntry<VoiceRoomCommand, VoiceRoomEvent>[],
  now: number,
): Compilable[] {
  const events = entries.flatMap((e) => e.events);
  // Heartbeats change nothing the projections show.
  if (events.every((e) => e.type === 'PresenceRefreshed')) return [];
  const version = entries[entries.length - 1]!.version;
  const online = presentCount(state.presence);
  const onMic = state.seats.filter((s) => s.user_id !== null).length;
  const where = { app_code: key.appCode, room_id: key.roomId };
  if (events.some((e) => e.type === 'RoomCreated')) {
    const common = {
      ...where,
      owner_user_id: state.owner_user_id!,
      title: state.title,
      status: state.status,
      created_at_ms: state.created_at_ms!,
      updated_at_ms: now,
    };
    return [
      db.insertInto('rooms').values({
        ...common,
        seat_count: state.seats.length,
        room_version: version,
        closed_at_ms: state.closed_at_ms,
      }),
      db
        .insertInto('room_list_entries')
        .values({ ...common, online_count: online, mic_count: onMic }),
    ];
  }
  return [
    db
      .updateTable('rooms')
      .set({
        status: state.status,
        // UpdateRoom may rename it (the lobby shows the current title), SetSeatCount resize it.
        title: state.title,
        seat_count: state.seats.length,
        room_version: version,
        closed_at_ms: state.closed_at_ms,
        updated_at_ms: now,
      })
      .where('app_code', '=', key.appCode)
      .where('room_id', '=', key.roomId),
    db
      .updateTable('room_list_entries')
      .set({
        status: state.status,
        title: state.title,
        online_count: online,
        mic_count: onMic,
        updated_at_ms: now,
      })
      .where('app_code', '=', key.appCode)
      .where('room_id', '=', key.roomId),
  ];
}
