/**
 * The rows of a meeting, written in the cell's commit transaction: `meeting_rooms` (inserted
 * by the batch that creates the meeting, its id the one `meeting_codes` drew for its code),
 * `meeting_participants` (one row per user, reused on re-join, role following host_id),
 * `meeting_chats`, and the release of `meeting_active_members` for whoever is no longer
 * active (see ./active-members.ts for the claim).
 */
import type { Compilable, QueryCreator } from 'kysely';
import type { DecidedEntry } from '../../cell/domain.js';
import type { CellKey } from '../../cell/lease.js';
import { activeParticipants, isActive, participantOf } from '../domain/evolve.js';
import type { MeetingCommand, MeetingEvent, MeetingState } from '../domain/types.js';
import type { Database } from '../../adapters/sql/schema.js';

/** Events that change nothing these rows show. */
const INVISIBLE = new Set<MeetingEvent['type']>([
  'SocketLive',
  'SocketsGone',
  'PresenceExpired',
  'MemberStateChanged',
  'HostGraceStarted',
  'HostGraceCancelled',
]);

export function projectMeeting(
  db: QueryCreator<Database>,
  key: CellKey,
  state: MeetingState,
  entries: readonly DecidedEntry<MeetingCommand, MeetingEvent>[],
  now: number,
): Compilable[] {
  const events = entries.flatMap((e) => e.events);
  if (events.every((e) => INVISIBLE.has(e.type))) return [];
  const app = key.appCode;
  const code = key.roomId;
  const out: Compilable[] = [];
  const room = {
    host_id: state.host_id ?? '',
    status: state.status ?? 0,
    ended_reason: state.ended_reason,
    ended_at_ms: state.ended_at_ms,
    online_count: activeParticipants(state).length,
    updated_at_ms: now,
  };
  if (events.some((e) => e.type === 'MeetingCreated')) {
    out.push(
      db
        .insertInto('meeting_rooms')
        .columns([
          'id',
          'app_code',
          'room_code',
          'title',
          'host_id',
          'type',
          'has_password',
          'max_members',
          'status',
          'ended_reason',
          'started_at_ms',
          'ended_at_ms',
          'settings',
          'online_count',
          'created_at_ms',
          'updated_at_ms',
        ])
        .expression(
          db
            .selectFrom('meeting_codes')
            .select((eb) => [
              'id',
              eb.val(app).as('app_code'),
              eb.val(code).as('room_code'),
              eb.val(state.title).as('title'),
              eb.val(room.host_id).as('host_id'),
              eb.val(1).as('type'),
              eb.val(state.has_password ? 1 : 0).as('has_password'),
              eb.val(state.max_members).as('max_members'),
              eb.val(room.status).as('status'),
              eb.val(room.ended_reason).as('ended_reason'),
              eb.val(state.started_at_ms).as('started_at_ms'),
              eb.val(room.ended_at_ms).as('ended_at_ms'),
              eb.val('{}').as('settings'),
              eb.val(room.online_count).as('online_count'),
              eb.val(state.created_at_ms ?? now).as('created_at_ms'),
              eb.val(now).as('updated_at_ms'),
            ])
            .where('app_code', '=', app)
            .where('room_code', '=', code),
        ),
    );
  } else {
    out.push(
      db
        .updateTable('meeting_rooms')
        .set(room)
        .where('app_code', '=', app)
        .where('room_code', '=', code),
    );
  }

  // Every user whose row this batch changed, with whether their row is new.
  const touched = new Map<string, boolean>();
  for (const e of events) {
    if (e.type === 'MemberJoined') touched.set(e.user_id, touched.get(e.user_id) || !e.rejoined);
    else if (e.type === 'MemberLeft' && !touched.has(e.user_id)) touched.set(e.user_id, false);
    else if (e.type === 'HostChanged') {
      for (const u of [e.old_host_id, e.new_host_id]) if (!touched.has(u)) touched.set(u, false);
    }
  }
  for (const [userId, fresh] of touched) {
    const p = participantOf(state, userId);
    if (!p) continue;
    const row = {
      role: state.host_id === userId ? 1 : 0,
      joined_at_ms: p.joined_at_ms,
      left_at_ms: p.left_at_ms,
      left_reason: p.left_reason,
      duration: p.duration_s,
    };
    out.push(
      fresh
        ? db.insertInto('meeting_participants').values({
            id: Number(p.participant_id),
            app_code: app,
            room_code: code,
            user_id: userId,
            ...row,
          })
        : db
            .updateTable('meeting_participants')
            .set(row)
            .where('app_code', '=', app)
            .where('room_code', '=', code)
            .where('user_id', '=', userId),
    );
  }

  for (const e of events) {
    if (e.type !== 'ChatSent') continue;
    out.push(
      db.insertInto('meeting_chats').values({
        app_code: app,
        room_code: code,
        message_id: e.message_id,
        user_id: e.user_id,
        content: e.content,
        created_at_ms: e.at_ms,
      }),
    );
  }

  // Left (kicked, ended) and not back by the end of the batch: the user may join elsewhere.
  const gone = [...touched.keys()].filter(
    (u) => !isActive(state, u) && events.some((e) => e.type === 'MemberLeft' && e.user_id === u),
  );
  if (gone.length > 0) {
    out.push(
      db
        .deleteFrom('meeting_active_members')
        .where('app_code', '=', app)
        .where('room_code', '=', code)
        .where('user_id', 'in', gone),
    );
  }
  return out;
}
