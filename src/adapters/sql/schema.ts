/**
 * Kysely table types. Later room kinds add their tables here; the runtime's own tables are
 * the cell row, the command log and the outbox.
 */
import type { Generated } from 'kysely';

export interface RoomCellsTable {
  app_code: string;
  room_id: string;
  kind: string;
  version: number;
  lease_epoch: number;
  owner_node_id: string | null;
  /** JSON of the state at snapshot_version. */
  snapshot: string | null;
  snapshot_version: number;
  next_alarm_ms: number | null;
  created_at_ms: number;
  updated_at_ms: number;
}

export interface RoomCommandLogTable {
  app_code: string;
  room_id: string;
  version: number;
  request_id: string;
  command_type: string;
  payload: string;
  /** JSON array of the events the command produced. */
  events: string;
  /** JSON of the reply returned to the caller (and to every retry). */
  result: string;
  owner_node_id: string;
  lease_token: string;
  lease_epoch: number;
  created_at_ms: number;
}

export type OutboxStatus = 'pending' | 'delivering' | 'delivered' | 'retryable' | 'failed';

export interface RoomOutboxTable {
  id: Generated<number>;
  event_id: string;
  app_code: string;
  room_id: string;
  room_version: number;
  event_type: string;
  envelope: string;
  status: OutboxStatus;
  attempts: number;
  worker_id: string | null;
  lock_until_ms: number | null;
  next_attempt_at_ms: number;
  last_error: string | null;
  created_at_ms: number;
  updated_at_ms: number;
}

export interface Database {
  room_cells: RoomCellsTable;
  room_command_log: RoomCommandLogTable;
  room_outbox: RoomOutboxTable;
}
