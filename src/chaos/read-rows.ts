/** Reads the rows the checker judges from the run's MySQL database. */
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import type { Rows } from './check/types.js';

type Value = string | number | null | undefined;
type Row = Readonly<Record<string, Value>>;
const json = (v: Value): unknown => (typeof v === 'string' ? JSON.parse(v) : v);
const text = (v: Value): string => String(v);
const inRoom = (r: Row) => ({ app: text(r.app_code), room: text(r.room_id) });

export async function readRows(dbUrl: string): Promise<Rows> {
  const db = await createConnection({ uri: dbUrl });
  const all = async (sql: string) => (await db.query<RowDataPacket[]>(sql))[0] as Row[];
  try {
    // One snapshot for every table.
    await db.query('START TRANSACTION WITH CONSISTENT SNAPSHOT');
    const cells = await all('SELECT app_code, room_id, kind, version FROM room_cells');
    const log = await all(
      'SELECT app_code, room_id, version, request_id, command_type, events FROM room_command_log',
    );
    const outcomes = await all(
      'SELECT app_code, room_id, request_id, version, outcome FROM room_request_outcomes',
    );
    const outbox = await all(
      'SELECT id, event_id, app_code, room_id, room_version, event_type, status FROM room_outbox',
    );
    const wallets = await all('SELECT app_code, user_id, balance FROM wallets');
    const ledger = await all(
      'SELECT app_code, request_id, kind, user_id, amount, room_id FROM wallet_ledger',
    );
    const members = await all('SELECT app_code, user_id, room_code FROM meeting_active_members');
    await db.query('COMMIT');
    return {
      cells: cells.map((r) => ({
        ...inRoom(r),
        kind: text(r.kind),
        version: Number(r.version),
      })),
      log: log.map((r) => ({
        ...inRoom(r),
        version: Number(r.version),
        requestId: text(r.request_id),
        commandType: text(r.command_type),
        events: json(r.events) as Rows['log'][number]['events'],
      })),
      outcomes: outcomes.map((r) => ({
        ...inRoom(r),
        requestId: text(r.request_id),
        version: Number(r.version),
        outcome: json(r.outcome) as Rows['outcomes'][number]['outcome'],
      })),
      outbox: outbox.map((r) => ({
        id: Number(r.id),
        eventId: text(r.event_id),
        ...inRoom(r),
        roomVersion: Number(r.room_version),
        type: text(r.event_type),
        status: text(r.status),
      })),
      wallets: wallets.map((r) => ({
        app: text(r.app_code),
        user: text(r.user_id),
        balance: Number(r.balance),
      })),
      ledger: ledger.map((r) => ({
        app: text(r.app_code),
        requestId: text(r.request_id),
        kind: text(r.kind),
        user: text(r.user_id),
        amount: Number(r.amount),
        room: r.room_id == null ? null : text(r.room_id),
      })),
      activeMembers: members.map((r) => ({
        app: text(r.app_code),
        user: text(r.user_id),
        room: text(r.room_code),
      })),
    };
  } finally {
    await db.end();
  }
}

/** Events committed but not delivered yet, and timers due within `withinMs`: the run settles first. */
export async function unsettled(
  dbUrl: string,
  withinMs: number,
): Promise<{ outbox: number; timers: number }> {
  const db = await createConnection({ uri: dbUrl, connectTimeout: 2_000 });
  try {
    const [[outbox]] = await db.query<RowDataPacket[]>(
      "SELECT COUNT(*) AS n FROM room_outbox WHERE status NOT IN ('delivered', 'skipped', 'failed')",
    );
    const [[timers]] = await db.query<RowDataPacket[]>(
      'SELECT COUNT(*) AS n FROM room_cells WHERE next_alarm_ms IS NOT NULL AND next_alarm_ms < ?',
      [Date.now() + withinMs],
    );
    return { outbox: Number(outbox!.n), timers: Number(timers!.n) };
  } finally {
    await db.end();
  }
}
