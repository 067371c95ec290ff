/**
 * The statements of one batch commit, in their order: the fence (an UPDATE of the cell row
 * conditional on version and lease_epoch, or for a room's first batch the INSERT of its
 * row), then the command log, the request outcomes, the outbox rows and the domain's
 * projections. Built here, run by sql-commit.ts.
 */
import type { CompiledQuery, Insertable, Kysely } from 'kysely';
import type { SqlFlavor } from './flavor.js';
import type { Database } from './schema.js';
import type { CellKey } from '../../cell/lease.js';
import { REACTION_GRACE_MS } from '../../cell/reactions.js';
import { connectionMark } from './stale-owner.js';
import type { SqlBatchWrite, SqlCommitRequest } from './sql-store-types.js';

/** The tables every batch appends to, one multi-row INSERT each. */
type LogTable = 'room_command_log' | 'room_request_outcomes' | 'room_outbox' | 'room_reactions';

/**
 * One multi-row INSERT of the runtime's own rows, kept as rows: Kysely compiles it for a
 * transaction, and the MySQL packet writes it as text directly (sql-commit.ts), which saves
 * building and then scanning hundreds of placeholders per batch.
 */
export type RowsInsert = {
  [T in LogTable]: { readonly table: T; readonly rows: readonly Insertable<Database[T]>[] };
}[LogTable];

export interface BatchStatements {
  /** Its row count decides: 1, the batch goes on; 0, the epoch or version moved. */
  readonly fence: CompiledQuery;
  /** The snapshot's row when the batch writes one (the fence records its version). */
  readonly snapshot: CompiledQuery | null;
  readonly inserts: readonly RowsInsert[];
  /** The domain's projections, after the runtime's rows. */
  readonly projections: readonly CompiledQuery[];
}

/** The batch's statements as Kysely compiles them, the fence first. */
export function compiledStatements(db: Kysely<Database>, batch: BatchStatements): CompiledQuery[] {
  return [
    batch.fence,
    ...(batch.snapshot ? [batch.snapshot] : []),
    // The union of tables defeats Kysely's typing, not its SQL: each insert's rows match its table.
    ...batch.inserts.map((i) =>
      db
        .insertInto(i.table)
        .values(i.rows as never)
        .compile(),
    ),
    ...batch.projections,
  ];
}

/** The delivery columns of an outbox row just written: pending, due now, never tried. */
export function pendingOutboxRow(nowMs: number) {
  return {
    status: 'pending' as const,
    attempts: 0,
    worker_id: null,
    lock_until_ms: null,
    next_attempt_at_ms: nowMs,
    last_error: null,
    created_at_ms: nowMs,
    updated_at_ms: nowMs,
  };
}

/** The fence first (its row count decides), then log, outcomes, outbox and projections. */
export function writeStatements(
  db: Kysely<Database>,
  flavor: SqlFlavor,
  request: SqlCommitRequest,
  write: SqlBatchWrite,
  nowMs: number,
): BatchStatements {
  const { key } = request;
  const fence = request.create
    ? insertFence(db, flavor, request, request.create.kind, write, nowMs)
    : db
        .updateTable('room_cells')
        .set({
          version: write.toVersion,
          next_alarm_ms: write.nextAlarmMs,
          updated_at_ms: nowMs,
          // Whose session holds the row until COMMIT: a takeover can end it (stale-owner.ts).
          ...connectionMark(flavor),
          ...(write.snapshot ? { snapshot_version: write.snapshot.version } : {}),
        })
        .where('app_code', '=', key.appCode)
        .where('room_id', '=', key.roomId)
        .where('version', '=', request.fromVersion)
        .where('lease_epoch', '=', request.leaseEpoch)
        .compile();
  const inserts: RowsInsert[] = [];
  if (write.log.length > 0) {
    const leaseToken = request.leaseToken();
    inserts.push({
      table: 'room_command_log',
      rows: write.log.map((r) => ({
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
    });
  }
  if (write.outcomes.length > 0) {
    inserts.push({
      table: 'room_request_outcomes',
      rows: write.outcomes.map((o) => ({
        app_code: key.appCode,
        room_id: key.roomId,
        request_id: o.requestId,
        version: o.version,
        outcome: o.outcome,
        created_at_ms: nowMs,
      })),
    });
  }
  if (write.outbox.length > 0) {
    inserts.push({
      table: 'room_outbox',
      rows: write.outbox.map((o) => ({
        event_id: o.eventId,
        app_code: key.appCode,
        room_id: key.roomId,
        room_version: o.roomVersion,
        event_type: o.eventType,
        envelope: o.envelope,
        ...pendingOutboxRow(nowMs),
      })),
    });
  }
  if (write.reactions.length > 0) {
    inserts.push({
      table: 'room_reactions',
      rows: write.reactions.map((r) => ({
        reaction_id: r.reactionId,
        app_code: key.appCode,
        room_id: key.roomId,
        room_version: r.roomVersion,
        reaction_type: r.type,
        data: r.data,
        status: 'pending' as const,
        attempts: 0,
        claim_token: null,
        // The owner carries it out at once; a relay takes it only if it is still here then.
        next_attempt_at_ms: nowMs + REACTION_GRACE_MS,
        last_error: null,
        created_at_ms: nowMs,
        updated_at_ms: nowMs,
      })),
    });
  }
  return {
    fence,
    snapshot: write.snapshot ? snapshotRow(db, flavor, key, write.snapshot.json).compile() : null,
    inserts,
    projections: write.statements.map((statement) => statement.compile()),
  };
}

/**
 * The room's snapshot row (`room_snapshots`), inserted or replaced: always written in the
 * transaction whose fence records its version in `room_cells.snapshot_version`.
 */
export function snapshotRow(db: Kysely<Database>, flavor: SqlFlavor, key: CellKey, json: string) {
  const insert = db
    .insertInto('room_snapshots')
    .values({ app_code: key.appCode, room_id: key.roomId, snapshot: json });
  return flavor === 'mysql'
    ? insert.onDuplicateKeyUpdate({ snapshot: json })
    : insert.onConflict((oc) =>
        oc.columns(['app_code', 'room_id']).doUpdateSet({ snapshot: json }),
      );
}

/**
 * The fence of a room's first batch: the row is inserted with the epoch the cell holds,
 * or not at all when another node created it first (0 rows, as a moved epoch gives).
 */
function insertFence(
  db: Kysely<Database>,
  flavor: SqlFlavor,
  request: SqlCommitRequest,
  kind: string,
  write: SqlBatchWrite,
  nowMs: number,
): CompiledQuery {
  return db
    .insertInto('room_cells')
    .values({
      app_code: request.key.appCode,
      room_id: request.key.roomId,
      kind,
      version: write.toVersion,
      lease_epoch: request.leaseEpoch,
      owner_node_id: request.nodeId,
      snapshot_version: write.snapshot?.version ?? 0,
      next_alarm_ms: write.nextAlarmMs,
      created_at_ms: nowMs,
      updated_at_ms: nowMs,
      ...connectionMark(flavor),
    })
    .orIgnore()
    .compile();
}
