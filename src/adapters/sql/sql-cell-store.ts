/**
 * CellStore on Kysely, identical for SQLite and MySQL/MariaDB. Order inside the commit
 * transaction: decide (domain rows), VerifyOwner in Redis, then the fence — the cell row
 * update `WHERE version = ? AND lease_epoch = ?` — and only then the command log and
 * outbox rows, then COMMIT. A node paused before the fence holds no lock on the cell, so a
 * takeover proceeds and the paused commit finds 0 rows; once past the fence it holds the
 * row lock, and a takeover's epoch bump waits for the COMMIT and then sees it. A room's
 * first batch inserts its row instead (INSERT … IGNORE: 0 rows when another node won).
 */
import type { CompiledQuery, ControlledTransaction, Kysely, QueryCreator } from 'kysely';
import { format, type SqlValue } from 'mysql2';
import type { Pool as PromisePool, ResultSetHeader } from 'mysql2/promise';
import type {
  ActivatedCell,
  BatchTransaction,
  BatchWrite,
  CellStore,
  CommitOutcome,
  CommitRequest,
  DueCell,
  RecordedResult,
} from '../../cell/cell-store.js';
import type { CellKey } from '../../cell/lease.js';
import { AppError, type DomainError } from '../../shared/errors.js';
import { isUniqueViolation } from './flavor.js';
import type { SqlBackend } from './database.js';
import type { Database } from './schema.js';

const LEASE_LOST: CommitOutcome = { kind: 'fenced', reason: 'lease token no longer current' };
const EPOCH_MOVED: CommitOutcome = { kind: 'fenced', reason: 'lease_epoch or version moved' };

export class SqlCellStore implements CellStore {
  private readonly db: Kysely<Database>;
  readonly queries: QueryCreator<Database>;

  constructor(private readonly backend: SqlBackend) {
    this.db = backend.db;
    this.queries = backend.db;
  }

  async activate(
    key: CellKey,
    kind: string,
    nodeId: string,
    nowMs: number,
    create: boolean,
  ): Promise<ActivatedCell | null> {
    const row = await this.db.transaction().execute(async (trx) => {
      // `kind` in the WHERE: a room of another kind is never fenced by a wrong-kind call.
      const bumped = await trx
        .updateTable('room_cells')
        .set((eb) => ({
          lease_epoch: eb('lease_epoch', '+', 1),
          owner_node_id: nodeId,
          updated_at_ms: nowMs,
        }))
        .where('app_code', '=', key.appCode)
        .where('room_id', '=', key.roomId)
        .where('kind', '=', kind)
        .executeTakeFirst();
      return trx
        .selectFrom('room_cells')
        .select(['kind', 'version', 'lease_epoch', 'snapshot', 'snapshot_version'])
        .where('app_code', '=', key.appCode)
        .where('room_id', '=', key.roomId)
        .executeTakeFirst()
        .then((r) => (r ? { ...r, bumped: Number(bumped.numUpdatedRows) === 1 } : undefined));
    });
    if (!row) return create ? unpersisted() : null;
    if (!row.bumped || row.kind !== kind) {
      throw new AppError('conflict', 'ROOM_KIND_MISMATCH', `room is a ${row.kind}, not a ${kind}`);
    }
    // Read after the bump committed: no earlier owner can commit any more, so this is final.
    const log = await this.db
      .selectFrom('room_command_log')
      .select(['version', 'request_id', 'events'])
      .where('app_code', '=', key.appCode)
      .where('room_id', '=', key.roomId)
      .where('version', '>', Number(row.snapshot_version))
      .orderBy('version')
      .execute();
    return {
      leaseEpoch: Number(row.lease_epoch),
      version: Number(row.version),
      snapshot: row.snapshot,
      snapshotVersion: Number(row.snapshot_version),
      log: log.map((r) => ({
        version: Number(r.version),
        requestId: r.request_id,
        events: r.events,
      })),
      persisted: true,
    };
  }

  commit(request: CommitRequest, nowMs: number): Promise<CommitOutcome> {
    return request.interactive
      ? this.commitInteractive(request, nowMs)
      : this.commitPrepared(request, nowMs);
  }

  /** Decided in memory first; on MySQL the whole write then goes in one packet. */
  private async commitPrepared(request: CommitRequest, nowMs: number): Promise<CommitOutcome> {
    const write = await request.build(null);
    if (!write) return { kind: 'committed', write: null };
    if (!(await request.verifyOwner())) return LEASE_LOST;
    const statements = this.writeStatements(request, write, nowMs);
    const pool = this.backend.mysqlPool;
    if (pool) return onePacket(pool.promise(), statements, write);
    const trx = await this.db.startTransaction().execute();
    return applyWrite(trx, statements, write);
  }

  /** Commands that write inside the transaction decide there, under savepoints. */
  private async commitInteractive(request: CommitRequest, nowMs: number): Promise<CommitOutcome> {
    // Started first so its Redis round trip overlaps BEGIN; awaited before the fence.
    const verified = request.verifyOwner();
    verified.catch(() => undefined);
    const trx = await this.db.startTransaction().execute();
    let write: BatchWrite | null;
    try {
      write = await request.build(batchTransaction(trx));
      if (!write) {
        await trx.rollback().execute();
        return { kind: 'committed', write: null };
      }
      if (!(await verified)) {
        await trx.rollback().execute();
        return LEASE_LOST;
      }
    } catch (error) {
      await trx
        .rollback()
        .execute()
        .catch(() => undefined);
      if (isUniqueViolation(error)) return { kind: 'duplicate_request' };
      throw error;
    }
    return applyWrite(trx, this.writeStatements(request, write, nowMs), write);
  }

  /** The fence first (its row count decides), then log, outcomes, outbox and projections. */
  private writeStatements(
    request: CommitRequest,
    write: BatchWrite,
    nowMs: number,
  ): CompiledQuery[] {
    const { key } = request;
    const fence = request.create
      ? this.insertFence(request, request.create.kind, write, nowMs)
      : this.db
          .updateTable('room_cells')
          .set({
            version: write.toVersion,
            next_alarm_ms: write.nextAlarmMs,
            updated_at_ms: nowMs,
            ...(write.snapshot
              ? { snapshot: write.snapshot.json, snapshot_version: write.snapshot.version }
              : {}),
          })
          .where('app_code', '=', key.appCode)
          .where('room_id', '=', key.roomId)
          .where('version', '=', request.fromVersion)
          .where('lease_epoch', '=', request.leaseEpoch)
          .compile();
    const statements: CompiledQuery[] = [fence];
    if (write.log.length > 0) {
      const leaseToken = request.leaseToken();
      statements.push(
        this.db
          .insertInto('room_command_log')
          .values(
            write.log.map((r) => ({
              app_code: key.appCode,
              room_id: key.roomId,
              version: r.version,
              request_id: r.requestId,
              command_type: r.commandType,
              payload: r.payload,
              events: r.events,
              result: r.result,
              owner_node_id: request.nodeId,
              lease_token: leaseToken,
              lease_epoch: request.leaseEpoch,
              created_at_ms: nowMs,
            })),
          )
          .compile(),
      );
    }
    if (write.outcomes.length > 0) {
      statements.push(
        this.db
          .insertInto('room_request_outcomes')
          .values(
            write.outcomes.map((o) => ({
              app_code: key.appCode,
              room_id: key.roomId,
              request_id: o.requestId,
              version: o.version,
              outcome: o.outcome,
              created_at_ms: nowMs,
            })),
          )
          .compile(),
      );
    }
    if (write.outbox.length > 0) {
      statements.push(
        this.db
          .insertInto('room_outbox')
          .values(
            write.outbox.map((o) => ({
              event_id: o.eventId,
              app_code: key.appCode,
              room_id: key.roomId,
              room_version: o.roomVersion,
              event_type: o.eventType,
              envelope: o.envelope,
              status: 'pending' as const,
              attempts: 0,
              worker_id: null,
              lock_until_ms: null,
              next_attempt_at_ms: nowMs,
              last_error: null,
              created_at_ms: nowMs,
              updated_at_ms: nowMs,
            })),
          )
          .compile(),
      );
    }
    return statements.concat(write.statements);
  }

  /**
   * The fence of a room's first batch: the row is inserted with the epoch the cell holds,
   * or not at all when another node created it first (0 rows, as a moved epoch gives).
   */
  private insertFence(
    request: CommitRequest,
    kind: string,
    write: BatchWrite,
    nowMs: number,
  ): CompiledQuery {
    return this.db
      .insertInto('room_cells')
      .values({
        app_code: request.key.appCode,
        room_id: request.key.roomId,
        kind,
        version: write.toVersion,
        lease_epoch: request.leaseEpoch,
        owner_node_id: request.nodeId,
        snapshot: write.snapshot?.json ?? null,
        snapshot_version: write.snapshot?.version ?? 0,
        next_alarm_ms: write.nextAlarmMs,
        created_at_ms: nowMs,
        updated_at_ms: nowMs,
      })
      .orIgnore()
      .compile();
  }

  async findResults(
    key: CellKey,
    requestIds: readonly string[],
  ): Promise<Map<string, RecordedResult>> {
    const found = new Map<string, RecordedResult>();
    if (requestIds.length === 0) return found;
    const rows = await this.db
      .selectFrom('room_request_outcomes')
      .select(['request_id', 'version', 'outcome'])
      .where('app_code', '=', key.appCode)
      .where('room_id', '=', key.roomId)
      .where('request_id', 'in', [...requestIds])
      .execute();
    for (const r of rows) {
      found.set(r.request_id, { version: Number(r.version), outcome: r.outcome });
    }
    return found;
  }

  async saveSnapshot(
    key: CellKey,
    leaseEpoch: number,
    version: number,
    json: string,
    nowMs: number,
  ): Promise<boolean> {
    const updated = await this.db
      .updateTable('room_cells')
      .set({ snapshot: json, snapshot_version: version, updated_at_ms: nowMs })
      .where('app_code', '=', key.appCode)
      .where('room_id', '=', key.roomId)
      .where('version', '=', version)
      .where('lease_epoch', '=', leaseEpoch)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) === 1;
  }

  async dueAlarms(nowMs: number, limit: number): Promise<DueCell[]> {
    const rows = await this.db
      .selectFrom('room_cells')
      .select(['app_code', 'room_id', 'kind'])
      .where('next_alarm_ms', '<=', nowMs)
      .orderBy('next_alarm_ms')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ key: { appCode: r.app_code, roomId: r.room_id }, kind: r.kind }));
  }
}

/** A room with no row: epoch 1 is what its first commit inserts (the bump of a creation). */
function unpersisted(): ActivatedCell {
  return {
    leaseEpoch: 1,
    version: 0,
    snapshot: null,
    snapshotVersion: 0,
    log: [],
    persisted: false,
  };
}

function batchTransaction(trx: ControlledTransaction<Database>): BatchTransaction {
  let n = 0;
  return {
    trx,
    async attempt(fn: () => Promise<DomainError | null>): Promise<DomainError | null> {
      const name = `cmd${++n}`;
      const inner = await trx.savepoint(name).execute();
      const error = await fn();
      if (error) await inner.rollbackToSavepoint(name).execute();
      else await inner.releaseSavepoint(name).execute();
      return error;
    },
  };
}

/** Runs the statements in an open transaction and commits, or rolls back when fenced. */
async function applyWrite(
  trx: ControlledTransaction<Database>,
  statements: readonly CompiledQuery[],
  write: BatchWrite,
): Promise<CommitOutcome> {
  try {
    const [fence, ...rest] = statements;
    const fenced = await trx.executeQuery(fence!);
    if (Number(fenced.numAffectedRows ?? 0) !== 1) {
      await trx.rollback().execute();
      return EPOCH_MOVED;
    }
    for (const statement of rest) await trx.executeQuery(statement);
  } catch (error) {
    await trx
      .rollback()
      .execute()
      .catch(() => undefined);
    if (isUniqueViolation(error)) return { kind: 'duplicate_request' };
    throw error;
  }
  await trx.commit().execute();
  return { kind: 'committed', write };
}

/**
 * MySQL: `START TRANSACTION; fence; log; outbox; projections` in one packet, then COMMIT
 * or ROLLBACK by the fence's row count: two round trips for the whole batch.
 */
async function onePacket(
  pool: PromisePool,
  statements: readonly CompiledQuery[],
  write: BatchWrite,
): Promise<CommitOutcome> {
  const conn = await pool.getConnection();
  let open = false;
  let broken = false;
  try {
    const text = [
      'START TRANSACTION',
      ...statements.map((s) => format(s.sql, s.parameters as SqlValue[])),
    ].join(';\n');
    open = true;
    const [results] = await conn.query<ResultSetHeader[]>(text);
    if (results[1]?.affectedRows !== 1) {
      await conn.query('ROLLBACK');
      open = false;
      return EPOCH_MOVED;
    }
    open = false; // a failed COMMIT has an unknown outcome: never roll back after it
    await conn.query('COMMIT');
    return { kind: 'committed', write };
  } catch (error) {
    if (open) await conn.query('ROLLBACK').catch(() => (broken = true));
    else broken = true;
    if (isUniqueViolation(error)) return { kind: 'duplicate_request' };
    throw error;
  } finally {
    if (broken) conn.destroy();
    else conn.release();
  }
}
