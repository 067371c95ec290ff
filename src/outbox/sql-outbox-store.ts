/**
 * OutboxStore on Kysely, for MySQL/MariaDB and SQLite: the claim (see ./sql-claim.ts),
 * settlements fenced by the claim's worker id and lock, and the operator's queries.
 */
import { sql, type Kysely } from 'kysely';
import type { SqlBackend } from '../adapters/sql/database.js';
import { markPruned } from '../adapters/sql/outbox-pruned.js';
import type { Database, OutboxStatus } from '../adapters/sql/schema.js';
import type {
  Claim,
  ClaimRequest,
  DeleteSettledRequest,
  FencedSettlement,
  OutboxListFilter,
  OutboxRecord,
  OutboxStore,
  RequeueTarget,
} from './outbox-store.js';
import { claimIn, UNDELIVERED } from './sql-claim.js';

const MAX_ERROR_CHARS = 1000;

type Db = Kysely<Database>;

export class SqlOutboxStore implements OutboxStore {
  constructor(private readonly backend: SqlBackend) {}

  async claim(request: ClaimRequest): Promise<Claim> {
    const lockUntilMs = request.nowMs + request.lockMs;
    const events =
      this.backend.flavor === 'mysql'
        ? await this.mysqlTransaction((trx) => claimIn(trx, request, lockUntilMs, true))
        : await this.sqliteImmediate((db) => claimIn(db, request, lockUntilMs, false));
    return { workerId: request.workerId, lockUntilMs, events };
  }

  async settle(settlements: readonly FencedSettlement[], nowMs: number): Promise<number> {
    if (settlements.length === 0) return 0;
    const write = (fn: (trx: Db) => Promise<number>) =>
      this.backend.flavor === 'mysql'
        ? this.mysqlTransaction(fn)
        : this.backend.db.transaction().execute(fn);
    return write(async (trx) => {
      let changed = 0;
      for (const group of groupByClaim(settlements)) {
        const { workerId, lockUntilMs } = group.claim;
        // Only while this claim still holds the row: a worker whose lock expired and was
        // taken over changes nothing.
        const held = () =>
          trx
            .updateTable('room_outbox')
            .where('status', '=', 'delivering')
            .where('worker_id', '=', workerId)
            .where('lock_until_ms', '=', lockUntilMs);
        const run = async (q: { executeTakeFirst(): Promise<{ numUpdatedRows: bigint }> }) => {
          changed += Number((await q.executeTakeFirst()).numUpdatedRows);
        };
        if (group.attempted.length > 0) {
          await run(
            held()
              .set((eb) => ({
                status: 'delivered',
                attempts: eb('attempts', '+', 1),
                lock_until_ms: null,
                updated_at_ms: nowMs,
              }))
              .where('id', 'in', group.attempted),
          );
        }
        for (const [reason, ids] of group.skipped) {
          await run(
            held()
              .set({
                status: 'skipped',
                last_error: reason.slice(0, MAX_ERROR_CHARS),
                lock_until_ms: null,
                updated_at_ms: nowMs,
              })
              .where('id', 'in', ids),
          );
        }
        if (group.released.length > 0) {
          await run(
            held()
              .set({
                status: sql<OutboxStatus>`case when attempts = 0 then 'pending' else 'retryable' end`,
                lock_until_ms: null,
                updated_at_ms: nowMs,
              })
              .where('id', 'in', group.released),
          );
        }
        for (const s of group.retryable) {
          await run(
            held()
              .set((eb) => ({
                status: 'retryable',
                attempts: eb('attempts', '+', 1),
                last_error: s.error.slice(0, MAX_ERROR_CHARS),
                next_attempt_at_ms: s.nextAttemptAtMs,
                lock_until_ms: null,
                updated_at_ms: nowMs,
              }))
              .where('id', '=', s.id),
          );
        }
        for (const s of group.failed) {
          await run(
            held()
              .set((eb) => ({
                status: 'failed',
                attempts: eb('attempts', '+', 1),
                last_error: s.error.slice(0, MAX_ERROR_CHARS),
                lock_until_ms: null,
                updated_at_ms: nowMs,
              }))
              .where('id', '=', s.id),
          );
        }
      }
      return changed;
    });
  }

  async oldestUndeliveredAtMs(): Promise<number | null> {
    const row = await this.backend.db
      .selectFrom('room_outbox')
      .select((eb) => eb.fn.min('created_at_ms').as('oldest'))
      .where('status', 'in', UNDELIVERED)
      .executeTakeFirst();
    return row?.oldest == null ? null : Number(row.oldest);
  }

  async list(filter: OutboxListFilter): Promise<OutboxRecord[]> {
    let q = this.backend.db.selectFrom('room_outbox').selectAll().orderBy('id').limit(filter.limit);
    if (filter.status) q = q.where('status', '=', filter.status);
    if (filter.appCode) q = q.where('app_code', '=', filter.appCode);
    if (filter.afterId !== undefined) q = q.where('id', '>', filter.afterId);
    const rows = await q.execute();
    return rows.map((r) => ({
      id: Number(r.id),
      eventId: r.event_id,
      appCode: r.app_code,
      roomId: r.room_id,
      roomVersion: Number(r.room_version),
      eventType: r.event_type,
      status: r.status,
      attempts: Number(r.attempts),
      workerId: r.worker_id,
      lockUntilMs: r.lock_until_ms == null ? null : Number(r.lock_until_ms),
      nextAttemptAtMs: Number(r.next_attempt_at_ms),
      lastError: r.last_error,
      envelope: r.envelope,
      createdAtMs: Number(r.created_at_ms),
      updatedAtMs: Number(r.updated_at_ms),
    }));
  }

  async requeue(target: RequeueTarget, nowMs: number): Promise<number> {
    if (target.eventIds?.length === 0) return 0;
    let q = this.backend.db
      .updateTable('room_outbox')
      .set({
        status: 'pending',
        attempts: 0,
        worker_id: null,
        lock_until_ms: null,
        next_attempt_at_ms: nowMs,
        updated_at_ms: nowMs,
      })
      .where('status', '=', target.status ?? 'failed');
    if (target.eventIds) q = q.where('event_id', 'in', [...target.eventIds]);
    if (target.appCode) q = q.where('app_code', '=', target.appCode);
    return Number((await q.executeTakeFirst()).numUpdatedRows);
  }

  async markFailed(eventId: string, reason: string, nowMs: number): Promise<boolean> {
    const result = await this.backend.db
      .updateTable('room_outbox')
      .set({ status: 'failed', last_error: reason.slice(0, MAX_ERROR_CHARS), updated_at_ms: nowMs })
      .where('event_id', '=', eventId)
      .where('status', 'in', ['pending', 'retryable'])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Short statements, none in a transaction: pick ids (a plain read), raise the picked
   * rooms' pruned marks (../adapters/sql/outbox-pruned.ts: a replay must not anchor below a
   * deleted row), then delete those rows by primary key, re-checking status and age (a row
   * re-queued in between is kept). Only the picked rows are locked, never a range: cell
   * commits keep inserting, and any number of nodes may sweep at once (they at worst pick
   * the same rows).
   */
  async deleteSettled(request: DeleteSettledRequest): Promise<number> {
    if (request.statuses.length === 0 || request.limit <= 0) return 0;
    const statuses = [...request.statuses];
    // The next_attempt_at_ms bound lets the (status, next_attempt_at_ms) index limit the
    // scan to candidates (else every sweep reads all recent delivered rows): a settled
    // row's next attempt was due when it was claimed, so it is at most its settle time
    // (an operator failing a retryable row keeps a later one: deleted that much later).
    const picked = await this.backend.db
      .selectFrom('room_outbox')
      .select(['id', 'app_code', 'room_id', 'room_version'])
      .where('status', 'in', statuses)
      .where('next_attempt_at_ms', '<', request.updatedBeforeMs)
      .where('updated_at_ms', '<', request.updatedBeforeMs)
      .limit(request.limit)
      .execute();
    if (picked.length === 0) return 0;
    await markPruned(this.backend.db, this.backend.flavor, picked);
    const result = await this.backend.db
      .deleteFrom('room_outbox')
      .where(
        'id',
        'in',
        picked.map((r) => Number(r.id)),
      )
      .where('status', 'in', statuses)
      .where('updated_at_ms', '<', request.updatedBeforeMs)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /**
   * MySQL: READ COMMITTED. Under REPEATABLE READ a locking scan also takes gap locks on
   * the outbox indexes, and those block (even deadlock) the cell commits' outbox INSERTs;
   * a failed commit drops the cell. READ COMMITTED locks only the rows it returns or
   * changes, and the order check's plain read sees the latest committed rows.
   */
  private mysqlTransaction<T>(fn: (trx: Db) => Promise<T>): Promise<T> {
    return this.backend.db.transaction().setIsolationLevel('read committed').execute(fn);
  }

  /** SQLite: take the write lock first, so the claim never fails upgrading a read lock. */
  private sqliteImmediate<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return this.backend.db.connection().execute(async (conn) => {
      await sql`begin immediate`.execute(conn);
      try {
        const result = await fn(conn);
        await sql`commit`.execute(conn);
        return result;
      } catch (error) {
        await sql`rollback`.execute(conn).catch(() => undefined);
        throw error;
      }
    });
  }
}

interface ClaimGroup {
  readonly claim: FencedSettlement['claim'];
  readonly attempted: number[];
  /** Reason → ids. */
  readonly skipped: Map<string, number[]>;
  readonly released: number[];
  readonly retryable: { id: number; error: string; nextAttemptAtMs: number }[];
  readonly failed: { id: number; error: string }[];
}

function groupByClaim(settlements: readonly FencedSettlement[]): ClaimGroup[] {
  const groups = new Map<string, ClaimGroup>();
  for (const { claim, settlement: s } of settlements) {
    const key = `${claim.workerId}\n${claim.lockUntilMs}`;
    let g = groups.get(key);
    if (!g) {
      g = { claim, attempted: [], skipped: new Map(), released: [], retryable: [], failed: [] };
      groups.set(key, g);
    }
    if (s.kind === 'delivered') g.attempted.push(s.id);
    else if (s.kind === 'skipped') {
      const ids = g.skipped.get(s.reason);
      if (ids) ids.push(s.id);
      else g.skipped.set(s.reason, [s.id]);
    } else if (s.kind === 'released') g.released.push(s.id);
    else if (s.kind === 'retryable') g.retryable.push(s);
    else g.failed.push(s);
  }
  return [...groups.values()];
}
