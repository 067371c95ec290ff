/**
 * ClaimPendingOutbox on Kysely, inside one short transaction (READ COMMITTED on MySQL,
 * BEGIN IMMEDIATE on SQLite). Only a room's head can open a claim, so the cost does not
 * grow with how many events wait behind heads that are in flight:
 *
 * 1. heads (plain read): each room's first event not yet delivered or failed, kept when it
 *    is claimable (pending; retryable and due; delivering with an expired lock); oldest
 *    first, so no room starves;
 * 2. prefixes (plain read): the first `perRoomLimit` undelivered events of those rooms;
 *    a room's prefix stops at its first event that is not claimable;
 * 3. lock (`FOR UPDATE SKIP LOCKED` on MySQL): the prefixes' rows again, re-checked. A row
 *    another worker holds or is claiming right now is skipped, and its room's prefix is
 *    cut there: nothing after it is taken. (SKIP LOCKED alone would hand out v+1 while
 *    v is locked by someone else.) A stale plain read only shortens prefixes;
 * 4. the kept rows become delivering with our worker id and lock.
 *
 * The one case a plain read cannot see is a failed event re-queued by an operator in the
 * meantime: a re-queued dead letter may be delivered after later events of its room.
 */
import { type ExpressionBuilder, type Kysely } from 'kysely';
import type { Database, OutboxStatus } from '../adapters/sql/schema.js';
import type { ClaimRequest, ClaimedEvent } from './outbox-store.js';

export const UNDELIVERED: OutboxStatus[] = ['pending', 'retryable', 'delivering'];

type Db = Kysely<Database>;

export async function claimIn(
  db: Db,
  request: ClaimRequest,
  lockUntilMs: number,
  rowLocks: boolean,
): Promise<ClaimedEvent[]> {
  const now = request.nowMs;
  const claimable = (eb: ExpressionBuilder<Database, 'room_outbox'>) =>
    eb.or([
      eb('status', '=', 'pending'),
      eb.and([eb('status', '=', 'retryable'), eb('next_attempt_at_ms', '<=', now)]),
      eb.and([eb('status', '=', 'delivering'), eb('lock_until_ms', '<=', now)]),
    ]);

  const heads = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('room_outbox')
        .select((e) => ['app_code', 'room_id', e.fn.min('id').as('head')])
        .where('status', 'in', UNDELIVERED)
        .groupBy(['app_code', 'room_id'])
        .as('x'),
    )
    .innerJoin('room_outbox', 'room_outbox.id', 'x.head')
    .select(['room_outbox.app_code', 'room_outbox.room_id'])
    .where((eb) => claimable(eb as unknown as ExpressionBuilder<Database, 'room_outbox'>))
    .orderBy('room_outbox.id')
    .limit(request.limit)
    .execute();
  if (heads.length === 0) return [];

  const prefixes = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('room_outbox')
        .select((e) => [
          'id',
          'event_id',
          'app_code',
          'room_id',
          'room_version',
          'envelope',
          'attempts',
          'created_at_ms',
          'status',
          'next_attempt_at_ms',
          'lock_until_ms',
          e.fn
            .agg<number>('row_number')
            .over((o) => o.partitionBy(['app_code', 'room_id']).orderBy('id'))
            .as('rn'),
        ])
        .where((e) =>
          e(
            e.refTuple('app_code', 'room_id'),
            'in',
            heads.map((h) => e.tuple(h.app_code, h.room_id)),
          ),
        )
        .where('status', 'in', UNDELIVERED)
        .as('p'),
    )
    .selectAll()
    .where('rn', '<=', request.perRoomLimit)
    .orderBy('id')
    .execute();

  // Per room, the claimable run from its head; then at most `limit` in total, oldest first.
  const stopped = new Set<string>();
  const wanted: typeof prefixes = [];
  for (const row of prefixes) {
    const room = roomOf(row.app_code, row.room_id);
    if (stopped.has(room)) continue;
    if (!isClaimable(row, now)) {
      stopped.add(room);
      continue;
    }
    if (wanted.length < request.limit) wanted.push(row);
  }
  if (wanted.length === 0) return [];

  let lockQuery = db
    .selectFrom('room_outbox')
    .select('id')
    .where(
      'id',
      'in',
      wanted.map((r) => Number(r.id)),
    )
    .where((eb) => claimable(eb));
  if (rowLocks) lockQuery = lockQuery.forUpdate().skipLocked();
  const locked = new Set((await lockQuery.execute()).map((r) => Number(r.id)));

  const taken: ClaimedEvent[] = [];
  stopped.clear();
  for (const row of wanted) {
    const room = roomOf(row.app_code, row.room_id);
    if (stopped.has(room)) continue;
    if (!locked.has(Number(row.id))) {
      stopped.add(room);
      continue;
    }
    taken.push({
      id: Number(row.id),
      eventId: row.event_id,
      appCode: row.app_code,
      roomId: row.room_id,
      roomVersion: Number(row.room_version),
      envelope: row.envelope,
      attempts: Number(row.attempts),
      createdAtMs: Number(row.created_at_ms),
    });
  }
  if (taken.length === 0) return [];
  await db
    .updateTable('room_outbox')
    .set({
      status: 'delivering',
      worker_id: request.workerId,
      lock_until_ms: lockUntilMs,
      updated_at_ms: now,
    })
    .where(
      'id',
      'in',
      taken.map((e) => e.id),
    )
    .execute();
  return taken;
}

function isClaimable(
  row: { status: OutboxStatus; next_attempt_at_ms: number; lock_until_ms: number | null },
  now: number,
): boolean {
  if (row.status === 'pending') return true;
  if (row.status === 'retryable') return Number(row.next_attempt_at_ms) <= now;
  return (
    row.status === 'delivering' && row.lock_until_ms !== null && Number(row.lock_until_ms) <= now
  );
}

function roomOf(appCode: string, roomId: string): string {
  return `${appCode}\u0000${roomId}`;
}
