/**
 * Activation on MySQL that does not wait behind a paused owner. An owner stopped (SIGSTOP, a
 * VM freeze, a long pause) between its fence UPDATE and its COMMIT keeps the cell row's lock
 * for as long as it stays stopped, and InnoDB would make the next owner's epoch bump wait for
 * it (`innodb_lock_wait_timeout`, 50 s by default): the room would be down for the whole pause.
 *
 * So activation takes the row lock with NOWAIT. While the row stays locked past a short grace
 * (time for a live owner's last commit to finish), it reads, uncommitted, which session wrote
 * the row last — every activation and every fence records its `CONNECTION_ID()` — confirms
 * that this node still holds the lease (so the holder's lease has expired or was taken: it is
 * stale), and ends that session with `KILL CONNECTION`. The server rolls the stale
 * transaction back; its owner, when it wakes, finds its COMMIT failed (connection lost) and
 * drops the cell. Safety never rests on the kill: the stale transaction fenced with the old
 * epoch, so once the bump commits it can never commit anything; the kill only bounds the wait.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Logger } from 'pino';
import type { CellKey } from '../../cell/lease.js';
import { errors } from '../../shared/error-codes.js';
import { isLockConflict, type SqlFlavor } from './flavor.js';
import type { Database } from './schema.js';

/** Time a locked row gets to be released by its holder before the holder is ended. */
export const STALE_LOCK_GRACE_MS = 200;
/** After this the activation gives up (retryable) instead of waiting on. */
export const ACTIVATION_LOCK_BUDGET_MS = 2_000;
const POLL_MS = 20;

/** The cell row columns every writer of a cell row sets: its session, on MySQL. */
export function connectionMark(flavor: SqlFlavor): { owner_conn_id?: RawBuilder<number> } {
  return flavor === 'mysql' ? { owner_conn_id: sql<number>`CONNECTION_ID()` } : {};
}

/** The session an activation ended (for the log). */
export interface EndedSession {
  readonly connectionId: number;
  readonly ownerNodeId: string | null;
}

export interface UnblockedActivation {
  readonly db: Kysely<Database>;
  readonly key: CellKey;
  /** True while this node holds the room's lease; asked before ending another session. */
  readonly confirmOwner?: () => Promise<boolean>;
  readonly logger?: Logger;
}

/**
 * Runs `attempt` (one activation transaction that starts by locking the row with NOWAIT)
 * until it gets the lock, ending a stale holder's session after the grace.
 */
export async function withoutWaitingOnStaleOwner<R>(
  activation: UnblockedActivation,
  attempt: () => Promise<R>,
): Promise<R> {
  const started = Date.now();
  const ended = new Set<number>();
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!isLockConflict(error)) throw error;
      const waited = Date.now() - started;
      if (waited >= ACTIVATION_LOCK_BUDGET_MS) throw errors.DATABASE_LOCK_CONFLICT.withCause(error);
      if (waited >= STALE_LOCK_GRACE_MS) await endLockHolder(activation, ended);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Locks the cell row or fails at once with a lock conflict (never waits). */
export async function lockRowNoWait(db: Kysely<Database>, key: CellKey): Promise<void> {
  await db
    .selectFrom('room_cells')
    .select('version')
    .where('app_code', '=', key.appCode)
    .where('room_id', '=', key.roomId)
    .forUpdate()
    .noWait()
    .execute();
}

async function endLockHolder(activation: UnblockedActivation, ended: Set<number>): Promise<void> {
  const { db, key, logger } = activation;
  // The newest version of the row, uncommitted included: the lock holder's own write.
  const holder = await db
    .transaction()
    .setIsolationLevel('read uncommitted')
    .execute((trx) =>
      trx
        .selectFrom('room_cells')
        .select(['owner_conn_id', 'owner_node_id'])
        .where('app_code', '=', key.appCode)
        .where('room_id', '=', key.roomId)
        .executeTakeFirst(),
    );
  const id = holder?.owner_conn_id == null ? null : Number(holder.owner_conn_id);
  if (id === null || !Number.isSafeInteger(id) || id <= 0 || ended.has(id)) return;
  if (activation.confirmOwner && !(await activation.confirmOwner())) {
    // The lease moved on while this activation waited: the holder may be the new owner.
    throw errors.CELL_FENCED();
  }
  ended.add(id);
  const session: EndedSession = { connectionId: id, ownerNodeId: holder?.owner_node_id ?? null };
  try {
    // An integer checked above: KILL takes no placeholder.
    await sql`KILL CONNECTION ${sql.raw(String(id))}`.execute(db);
    logger?.warn(
      { room: `${key.appCode}/${key.roomId}`, ...session },
      "ended a stale owner's session that held the room row past its lease",
    );
  } catch (error) {
    // Gone already (it woke and finished): the next attempt gets the lock.
    if ((error as { code?: unknown }).code === 'ER_NO_SUCH_THREAD') return;
    // Not ours to end (another database user): the activation polls on, up to its budget.
    logger?.warn(
      { room: `${key.appCode}/${key.roomId}`, ...session, err: error },
      "could not end a stale owner's session",
    );
  }
}
