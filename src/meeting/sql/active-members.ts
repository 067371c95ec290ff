/**
 * Invariant 6 (a user is an active participant of at most one meeting), enforced by the
 * database: the create/join/admit commit claims `meeting_active_members (app_code, user_id)` for
 * its meeting. Two meetings on two nodes claiming one user race on that primary key; the
 * loser's commit sees the winner's row and refuses its command with 你当前已在其他会议中.
 * The row goes in the projection of the leave / kick / end that makes the user inactive.
 */
import type { Transaction } from 'kysely';
import type { DecidedEntry } from '../../cell/domain.js';
import type { CellKey } from '../../cell/lease.js';
import { refuse } from '../domain/errors.js';
import type { MeetingCommand, MeetingEvent } from '../domain/types.js';
import type { DomainError } from '../../shared/errors.js';
import type { SqlFlavor } from '../../adapters/sql/flavor.js';
import type { Database } from '../../adapters/sql/schema.js';

export async function claimActiveMeeting(
  trx: Transaction<Database>,
  flavor: SqlFlavor,
  entry: DecidedEntry<MeetingCommand, MeetingEvent>,
  key: CellKey,
): Promise<DomainError | null> {
  for (const event of entry.events) {
    if (event.type !== 'MemberJoined') continue;
    const inserted = await trx
      .insertInto('meeting_active_members')
      .values({ app_code: key.appCode, user_id: event.user_id, room_code: key.roomId })
      .orIgnore() // INSERT IGNORE (MySQL) / INSERT OR IGNORE (SQLite): only the key conflicts
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) continue;
    // A locking read on MySQL: it sees the latest committed row, not the snapshot's.
    const held = await trx
      .selectFrom('meeting_active_members')
      .select('room_code')
      .where('app_code', '=', key.appCode)
      .where('user_id', '=', event.user_id)
      .$if(flavor === 'mysql', (q) => q.forUpdate())
      .executeTakeFirst();
    if (held && held.room_code !== key.roomId) return refuse('IN_OTHER_MEETING');
    if (!held) {
      // Deleted between the two statements (that meeting's leave committed): claim it now.
      await trx
        .insertInto('meeting_active_members')
        .values({ app_code: key.appCode, user_id: event.user_id, room_code: key.roomId })
        .execute();
    }
  }
  return null;
}
