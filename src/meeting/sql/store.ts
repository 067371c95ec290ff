/**
 * The meeting edges' {@link MeetingStore} on the SQL database. The allocators insert-or-ignore
 * by their unique key and read back, so concurrent and repeated calls agree on one id.
 */
import type { Kysely } from 'kysely';
import { requestDecided } from '../../adapters/sql/request-decided.js';
import type { ChatRow, CodeClaim, MeetingRow, MeetingStore, Page } from '../api/meeting-store.js';
import type { Database } from '../../adapters/sql/schema.js';

export function sqlMeetingStore(db: Kysely<Database>): MeetingStore {
  return {
    async claimMeetingCode(appCode, requestKey, roomCode, nowMs): Promise<CodeClaim> {
      await db
        .insertInto('meeting_codes')
        .values({
          app_code: appCode,
          room_code: roomCode,
          request_key: requestKey,
          created_at_ms: nowMs,
        })
        .orIgnore()
        .execute();
      const row = await db
        .selectFrom('meeting_codes')
        .select(['id', 'room_code'])
        .where('app_code', '=', appCode)
        .where('request_key', '=', requestKey)
        .executeTakeFirst();
      return row
        ? { kind: 'claimed', id: Number(row.id), room_code: row.room_code }
        : { kind: 'taken' };
    },

    async hasCodeClaim(appCode, requestKey) {
      const row = await db
        .selectFrom('meeting_codes')
        .select('id')
        .where('app_code', '=', appCode)
        .where('request_key', '=', requestKey)
        .executeTakeFirst();
      return row !== undefined;
    },

    async releaseMeetingCode(appCode, requestKey, roomCode) {
      await db.transaction().execute(async (tx) => {
        // Never the code of a meeting that exists (e.g. a retry refused after its first
        // outcome was forgotten): its projection row is written in the create's commit.
        const gone = await tx
          .deleteFrom('meeting_codes')
          .where('app_code', '=', appCode)
          .where('request_key', '=', requestKey)
          .where('room_code', '=', roomCode)
          .where((eb) =>
            eb.not(
              eb.exists(
                eb
                  .selectFrom('meeting_rooms')
                  .select('id')
                  .where('meeting_rooms.app_code', '=', appCode)
                  .where('meeting_rooms.room_code', '=', roomCode),
              ),
            ),
          )
          .executeTakeFirst();
        // The host's row id was allocated before the refusal; nobody else could join there.
        if (Number(gone.numDeletedRows) > 0) {
          await tx
            .deleteFrom('meeting_participant_ids')
            .where('app_code', '=', appCode)
            .where('room_code', '=', roomCode)
            .execute();
        }
      });
    },

    async countOpenHosted(appCode, userId) {
      // Through the user's own participations (indexed by user): a host is one of them.
      const row = await db
        .selectFrom('meeting_participants as p')
        .innerJoin('meeting_rooms as r', (join) =>
          join.onRef('r.app_code', '=', 'p.app_code').onRef('r.room_code', '=', 'p.room_code'),
        )
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('p.app_code', '=', appCode)
        .where('p.user_id', '=', userId)
        .where('r.host_id', '=', userId)
        .where('r.status', '!=', 2)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    requestDecided: (appCode, roomCode, scopedRequestId) =>
      requestDecided(db, appCode, roomCode, scopedRequestId),

    async meetingIdOf(appCode, roomCode) {
      const row = await db
        .selectFrom('meeting_codes')
        .select('id')
        .where('app_code', '=', appCode)
        .where('room_code', '=', roomCode)
        .executeTakeFirst();
      return row ? Number(row.id) : null;
    },

    async participantIdOf(appCode, roomCode, userId) {
      const where = { app_code: appCode, room_code: roomCode, user_id: userId };
      await db.insertInto('meeting_participant_ids').values(where).orIgnore().execute();
      const row = await db
        .selectFrom('meeting_participant_ids')
        .select('id')
        .where('app_code', '=', appCode)
        .where('room_code', '=', roomCode)
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow();
      return Number(row.id);
    },

    async activeMeetingOf(appCode, userId) {
      const row = await db
        .selectFrom('meeting_active_members')
        .select('room_code')
        .where('app_code', '=', appCode)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row?.room_code ?? null;
    },

    async listMine(appCode, userId, query): Promise<Page<MeetingRow>> {
      const rows = await db
        .selectFrom('meeting_rooms')
        .selectAll()
        .where('app_code', '=', appCode)
        .where((eb) =>
          eb.or([
            eb('host_id', '=', userId),
            eb(
              'room_code',
              'in',
              eb
                .selectFrom('meeting_participants')
                .select('room_code')
                .where('app_code', '=', appCode)
                .where('user_id', '=', userId),
            ),
          ]),
        )
        .$if(query.status !== undefined, (q) => q.where('status', '=', query.status!))
        .$if(query.beforeId !== undefined, (q) => q.where('id', '<', query.beforeId!))
        .orderBy('id', 'desc')
        .limit(query.limit + 1)
        .execute();
      return {
        list: rows.slice(0, query.limit).map((r) => ({
          id: Number(r.id),
          room_code: r.room_code,
          title: r.title,
          host_id: r.host_id,
          type: Number(r.type),
          has_password: Boolean(Number(r.has_password)),
          max_members: Number(r.max_members),
          status: Number(r.status) as 0 | 1 | 2,
          ended_reason: r.ended_reason,
          started_at_ms: r.started_at_ms === null ? null : Number(r.started_at_ms),
          ended_at_ms: r.ended_at_ms === null ? null : Number(r.ended_at_ms),
          settings: r.settings,
          online_count: Number(r.online_count),
          created_at_ms: Number(r.created_at_ms),
        })),
        has_more: rows.length > query.limit,
      };
    },

    async listChats(appCode, roomCode, query): Promise<Page<ChatRow>> {
      const rows = await db
        .selectFrom('meeting_chats')
        .select(['message_id', 'user_id', 'content', 'created_at_ms'])
        .where('app_code', '=', appCode)
        .where('room_code', '=', roomCode)
        .$if(query.beforeId !== undefined, (q) => q.where('message_id', '<', query.beforeId!))
        .orderBy('message_id', 'desc')
        .limit(query.limit + 1)
        .execute();
      return {
        list: rows.slice(0, query.limit).map((r) => ({
          message_id: Number(r.message_id),
          user_id: r.user_id,
          content: r.content,
          created_at_ms: Number(r.created_at_ms),
        })),
        has_more: rows.length > query.limit,
      };
    },
  };
}
