/**
 * The `rooms` and `room_list_entries` rows of a voice room, written in the cell's commit
 * transaction: inserted by the batch that creates the room, updated by later batches that
 * change what they show; and the chat history's rows (`voice_room_messages`).
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
  const chat = chatRows(db, key, events, now);
  // Heartbeats and chat change nothing the room rows show (`room_version`: the last that did).
  if (events.every((e) => UNSHOWN.has(e.type))) return chat;
  const version = entries[entries.length - 1]!.version;
  const online = presentCount(state.presence);
  const onMic = state.seats.filter((s) => s.user_id !== null).length;
  if (events.some((e) => e.type === 'RoomCreated')) {
    return [...roomRowsCreated(db, key, state, version, online, onMic, now), ...chat];
  }
  return [...roomRowsUpdated(db, key, state, version, online, onMic, now), ...chat];
}

const UNSHOWN: ReadonlySet<VoiceRoomEvent['type']> = new Set([
  'PresenceRefreshed',
  'RoomMessageSent',
  'ChatMuteSet',
  'RoomMessageDeleted',
]);

/** The history's rows: a message inserted with its commit, a deletion marked. */
function chatRows(
  db: QueryCreator<Database>,
  key: CellKey,
  events: readonly VoiceRoomEvent[],
  now: number,
): Compilable[] {
  const sent = events.flatMap((e) => (e.type === 'RoomMessageSent' ? [e] : []));
  const deleted = events.flatMap((e) => (e.type === 'RoomMessageDeleted' ? [e.message_id] : []));
  const rows: Compilable[] = [];
  if (sent.length > 0) {
    rows.push(
      db.insertInto('voice_room_messages').values(
        sent.map((m) => ({
          app_code: key.appCode,
          room_id: key.roomId,
          message_id: m.message_id,
          user_id: m.user_id,
          user_name: m.user_name,
          content: m.content,
          created_at_ms: m.at_ms,
          deleted_at_ms: null,
        })),
      ),
    );
  }
  if (deleted.length > 0) {
    rows.push(
      db
        .updateTable('voice_room_messages')
        .set({ deleted_at_ms: now })
        .where('app_code', '=', key.appCode)
        .where('room_id', '=', key.roomId)
        .where('message_id', 'in', deleted),
    );
  }
  return rows;
}

function roomRowsCreated(
  db: QueryCreator<Database>,
  key: CellKey,
  state: VoiceRoomState,
  version: number,
  online: number,
  onMic: number,
  now: number,
): Compilable[] {
  const where = { app_code: key.appCode, room_id: key.roomId };
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

function roomRowsUpdated(
  db: QueryCreator<Database>,
  key: CellKey,
  state: VoiceRoomState,
  version: number,
  online: number,
  onMic: number,
  now: number,
): Compilable[] {
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
