/**
 * CellStore on Kysely, identical for SQLite and MySQL/MariaDB. Order inside the commit
 * transaction: decide (domain rows), VerifyOwner in Redis, then the fence — the cell row
 * update `WHERE version = ? AND lease_epoch = ?` — and only then the command log and
 * outbox rows, then COMMIT. A node paused before the fence holds no lock on the cell, so a
 * takeover proceeds and the paused commit finds 0 rows; once past the fence it holds the
 * row lock, and a takeover's epoch bump waits for the COMMIT and then sees it. A room's
 * first batch inserts its row instead (INSERT … IGNORE: 0 rows when another node won).
 * On MySQL a takeover does not wait for a paused owner's COMMIT: it ends the paused
 * session once the lease confirms it is stale (stale-owner.ts).
 */
import type { Kysely, QueryCreator } from 'kysely';
import type { Logger } from 'pino';
import type {
  ActivatedCell,
  ActivateOptions,
  CellStore,
  DueCell,
  DueCursor,
  RecordedResult,
} from '../../cell/cell-store.js';
import type { CellKey } from '../../cell/lease.js';
import { compiledStatements, snapshotRow, writeStatements } from './batch-statements.js';
import { isUniqueViolation } from './flavor.js';
import type { SqlBackend } from './database.js';
import type { Database } from './schema.js';
import { applyWrite, batchTransaction, LEASE_LOST, onePacket } from './sql-commit.js';
import { connectionMark, lockRowNoWait, withoutWaitingOnStaleOwner } from './stale-owner.js';
import type {
  SqlBatchWrite,
  SqlCommitOutcome,
  SqlCommitRequest,
  SqlStoreTypes,
} from './sql-store-types.js';
import { errors } from '../../shared/error-codes.js';

export class SqlCellStore implements CellStore<SqlStoreTypes> {
  private readonly db: Kysely<Database>;
  readonly queries: QueryCreator<Database>;
  /** On MySQL a batch's write is one packet, and the next may follow it at once. */
  readonly pipelines: boolean;

  private readonly logger: Logger | undefined;

  constructor(
    private readonly backend: SqlBackend,
    options: { readonly logger?: Logger } = {},
  ) {
    this.db = backend.db;
    this.queries = backend.db;
    this.pipelines = backend.mysqlPool !== null;
    this.logger = options.logger;
  }

  async activate(
    key: CellKey,
    kind: string,
    nodeId: string,
    nowMs: number,
    create: boolean,
    options: ActivateOptions = {},
  ): Promise<ActivatedCell | null> {
    const mysql = this.backend.flavor === 'mysql';
    const bump = () =>
      this.db.transaction().execute(async (trx) => {
        if (mysql) await lockRowNoWait(trx, key);
        return this.bumpEpoch(trx, key, kind, nodeId, nowMs);
      });
    const row = mysql
      ? await withoutWaitingOnStaleOwner(
          {
            db: this.db,
            key,
            ...(options.confirmOwner ? { confirmOwner: options.confirmOwner } : {}),
            ...(this.logger ? { logger: this.logger } : {}),
          },
          bump,
        )
      : await bump();
    if (!row) return create ? unpersisted() : null;
    if (!row.bumped || row.kind !== kind) {
      throw errors.ROOM_KIND_MISMATCH(row.kind, kind);
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

  /** The fence of every earlier owner: `lease_epoch + 1`, then the row as it now is. */
  private async bumpEpoch(
    trx: Kysely<Database>,
    key: CellKey,
    kind: string,
    nodeId: string,
    nowMs: number,
  ) {
    // `kind` in the WHERE: a room of another kind is never fenced by a wrong-kind call.
    const bumped = await trx
      .updateTable('room_cells')
      .set((eb) => ({
        lease_epoch: eb('lease_epoch', '+', 1),
        owner_node_id: nodeId,
        updated_at_ms: nowMs,
        ...connectionMark(this.backend.flavor),
      }))
      .where('app_code', '=', key.appCode)
      .where('room_id', '=', key.roomId)
      .where('kind', '=', kind)
      .executeTakeFirst();
    return trx
      .selectFrom('room_cells')
      .leftJoin('room_snapshots as s', (join) =>
        join
          .onRef('s.app_code', '=', 'room_cells.app_code')
          .onRef('s.room_id', '=', 'room_cells.room_id'),
      )
      .select(['kind', 'version', 'lease_epoch', 's.snapshot', 'snapshot_version'])
      .where('room_cells.app_code', '=', key.appCode)
      .where('room_cells.room_id', '=', key.roomId)
      .executeTakeFirst()
      .then((r) => (r ? { ...r, bumped: Number(bumped.numUpdatedRows) === 1 } : undefined));
  }

  commit(request: SqlCommitRequest, nowMs: number): Promise<SqlCommitOutcome> {
    return request.interactive
      ? this.commitInteractive(request, nowMs)
      : this.commitPrepared(request, nowMs);
  }

  /** Decided in memory first; on MySQL the whole write then goes in one packet. */
  private async commitPrepared(
    request: SqlCommitRequest,
    nowMs: number,
  ): Promise<SqlCommitOutcome> {
    const write = await request.build(null);
    if (!write) return { kind: 'committed', write: null };
    if (!(await request.verifyOwner())) return LEASE_LOST;
    const statements = writeStatements(this.db, this.backend.flavor, request, write, nowMs);
    const pool = this.backend.mysqlPool;
    if (pool) return onePacket(pool.promise(), statements, write, request.sent);
    const trx = await this.db.startTransaction().execute();
    return applyWrite(trx, compiledStatements(this.db, statements), write);
  }

  /** Commands that write inside the transaction decide there, under savepoints. */
  private async commitInteractive(
    request: SqlCommitRequest,
    nowMs: number,
  ): Promise<SqlCommitOutcome> {
    // Started first so its Redis round trip overlaps BEGIN; awaited before the fence.
    const verified = request.verifyOwner();
    verified.catch(() => undefined);
    const trx = await this.db.startTransaction().execute();
    let write: SqlBatchWrite | null;
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
    return applyWrite(
      trx,
      compiledStatements(
        this.db,
        writeStatements(this.db, this.backend.flavor, request, write, nowMs),
      ),
      write,
    );
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
    // The fence and the snapshot's row together: a fenced owner writes neither.
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('room_cells')
        .set({ snapshot_version: version, updated_at_ms: nowMs })
        .where('app_code', '=', key.appCode)
        .where('room_id', '=', key.roomId)
        .where('version', '=', version)
        .where('lease_epoch', '=', leaseEpoch)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return false;
      await snapshotRow(trx, this.backend.flavor, key, json).execute();
      return true;
    });
  }

  async leaseEpochOf(key: CellKey): Promise<number | null> {
    const row = await this.db
      .selectFrom('room_cells')
      .select('lease_epoch')
      .where('app_code', '=', key.appCode)
      .where('room_id', '=', key.roomId)
      .executeTakeFirst();
    return row ? Number(row.lease_epoch) : null;
  }

  async dueAlarms(nowMs: number, limit: number, after?: DueCursor | null): Promise<DueCell[]> {
    const rows = await dueAlarmsQuery(this.db, nowMs, limit, after).execute();
    return rows.map((r) => ({
      key: { appCode: r.app_code, roomId: r.room_id },
      kind: r.kind,
      alarmMs: Number(r.next_alarm_ms),
    }));
  }
}

/**
 * The sweeper's query, every few seconds on every node: the rooms whose alarm is due,
 * oldest first, in pages (alarm, app, room). It reads the `room_cells_next_alarm` index
 * (0001), so its cost is the rows it returns, not the table's (bench/scale/sweeper.ts
 * prints its plan).
 */
export function dueAlarmsQuery(
  db: Kysely<Database>,
  nowMs: number,
  limit: number,
  after?: DueCursor | null,
) {
  let query = db
    .selectFrom('room_cells')
    .select(['app_code', 'room_id', 'kind', 'next_alarm_ms'])
    .where('next_alarm_ms', '<=', nowMs);
  if (after) {
    const { alarmMs, key } = after;
    query = query.where((eb) =>
      eb.or([
        eb('next_alarm_ms', '>', alarmMs),
        eb.and([
          eb('next_alarm_ms', '=', alarmMs),
          eb.or([
            eb('app_code', '>', key.appCode),
            eb.and([eb('app_code', '=', key.appCode), eb('room_id', '>', key.roomId)]),
          ]),
        ]),
      ]),
    );
  }
  return query.orderBy('next_alarm_ms').orderBy('app_code').orderBy('room_id').limit(limit);
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
