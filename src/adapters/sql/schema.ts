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
  /** MySQL `CONNECTION_ID()` of the last activation or fence (0012); null on SQLite. */
  owner_conn_id: number | null;
  /** The version the room's snapshot (`room_snapshots`, 0017) holds the state of; 0: none. */
  snapshot_version: number;
  next_alarm_ms: number | null;
  created_at_ms: number;
  updated_at_ms: number;
}

/** `0017_room_snapshots`: the JSON of a room's state at its `room_cells.snapshot_version`. */
export interface RoomSnapshotsTable {
  app_code: string;
  room_id: string;
  snapshot: string;
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

/** `0005_request_outcomes`: the first decided outcome of each request id of a room. */
export interface RoomRequestOutcomesTable {
  app_code: string;
  room_id: string;
  request_id: string;
  version: number;
  /** `{"reply": …}` or `{"error": {kind, code, message}}`. */
  outcome: string;
  created_at_ms: number;
}

export type OutboxStatus =
  | 'pending'
  | 'delivering'
  | 'delivered'
  | 'retryable'
  | 'failed'
  /** Not sent: the app had no webhook when the event was claimed (can be re-queued). */
  | 'skipped';

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

/** `0015_room_reactions`: post-commit reactions not carried out yet (src/cell/reactions.ts). */
export interface RoomReactionsTable {
  reaction_id: string;
  app_code: string;
  room_id: string;
  room_version: number;
  reaction_type: string;
  data: string;
  status: 'pending' | 'failed';
  attempts: number;
  claim_token: string | null;
  next_attempt_at_ms: number;
  last_error: string | null;
  created_at_ms: number;
  updated_at_ms: number;
}

/** `0014_room_outbox_pruned`: the highest room version outbox retention deleted, per room. */
export interface RoomOutboxPrunedTable {
  app_code: string;
  room_id: string;
  max_version: number;
}

/** Accounts (`0003_accounts`): one row per user of one app. */
export interface UsersTable {
  id: Generated<number>;
  app_code: string;
  /** As registered, for display. */
  username: string;
  /** Lower-cased username: unique per app (usernames are case-insensitive). */
  username_key: string;
  password_hash: string;
  nickname: string;
  /** Empty when the user has none. */
  avatar: string;
  created_at_ms: number;
  updated_at_ms: number;
}

export interface RoomsTable {
  app_code: string;
  room_id: string;
  owner_user_id: string;
  title: string;
  status: string;
  seat_count: number;
  room_version: number;
  created_at_ms: number;
  closed_at_ms: number | null;
  updated_at_ms: number;
}

export interface RoomListEntriesTable {
  app_code: string;
  room_id: string;
  owner_user_id: string;
  title: string;
  status: string;
  online_count: number;
  mic_count: number;
  created_at_ms: number;
  updated_at_ms: number;
}

export interface WalletsTable {
  app_code: string;
  user_id: string;
  balance: number;
  updated_at_ms: number;
}

export interface WalletLedgerTable {
  id: Generated<number>;
  app_code: string;
  request_id: string;
  kind: 'topup' | 'gift';
  user_id: string;
  /** Signed: negative for the payer of a gift. */
  amount: number;
  room_id: string | null;
  /** JSON: receivers, gift, count. */
  detail: string;
  created_at_ms: number;
}

export interface GiftCatalogTable {
  app_code: string;
  gift_id: string;
  name: string;
  price: number;
  active: number;
  updated_at_ms: number;
}

/** `0007_meetings`: a meeting's numeric id and room code, drawn once per create request. */
export interface MeetingCodesTable {
  id: Generated<number>;
  app_code: string;
  room_code: string;
  /** The caller-scoped create request the code was drawn for. */
  request_key: string;
  created_at_ms: number;
}

/** `0007_meetings`: the participant row id of a (meeting, user), allocated before the join. */
export interface MeetingParticipantIdsTable {
  id: Generated<number>;
  app_code: string;
  room_code: string;
  user_id: string;
}

/** `0007_meetings`: the meeting cell's room projection (status 0/1/2). */
export interface MeetingRoomsTable {
  id: number;
  app_code: string;
  room_code: string;
  title: string;
  host_id: string;
  type: number;
  has_password: number;
  max_members: number;
  status: number;
  ended_reason: string | null;
  started_at_ms: number | null;
  ended_at_ms: number | null;
  settings: string;
  online_count: number;
  created_at_ms: number;
  updated_at_ms: number;
}

/** `0007_meetings`: one row per (meeting, user), reused on re-join. role 1 主持人 / 0 参会者. */
export interface MeetingParticipantsTable {
  id: number;
  app_code: string;
  room_code: string;
  user_id: string;
  role: number;
  joined_at_ms: number;
  left_at_ms: number | null;
  left_reason: string | null;
  duration: number;
}

export interface MeetingChatsTable {
  app_code: string;
  room_code: string;
  /** 1, 2, 3… within the meeting. */
  message_id: number;
  user_id: string;
  content: string;
  created_at_ms: number;
}

/** `0018`: a voice room's public chat; `deleted_at_ms` set by DeleteRoomMessage. */
export interface VoiceRoomMessagesTable {
  app_code: string;
  room_id: string;
  /** 1, 2, 3… within the room. */
  message_id: number;
  user_id: string;
  user_name: string;
  content: string;
  created_at_ms: number;
  deleted_at_ms: number | null;
}

/** `0018`: gift totals per room, board (`contribution`, `charm`) and user. */
export interface VoiceRoomRankingsTable {
  app_code: string;
  room_id: string;
  board: string;
  user_id: string;
  /** All time. */
  total: number;
  updated_at_ms: number;
  /** The day `day_total` counts (`YYYY-MM-DD`, the rankings' time zone). */
  day: string;
  day_total: number;
  day_updated_at_ms: number;
}

/** Invariant 6: the one meeting a user is active in; the primary key refuses a second. */
export interface MeetingActiveMembersTable {
  app_code: string;
  user_id: string;
  room_code: string;
}

/** `0008_notifications`: one row per recipient of a notification. */
export interface NotificationsTable {
  id: Generated<number>;
  app_code: string;
  /** The recipient. */
  user_id: string;
  type: string;
  title: string;
  content: string;
  /** JSON object. */
  extra: string;
  /** 0 or 1. */
  is_read: number;
  read_at_ms: number | null;
  created_at_ms: number;
  /** The sending request's key (0011), unique per app and recipient; null: none. */
  request_key: string | null;
}

export interface Database {
  room_cells: RoomCellsTable;
  room_snapshots: RoomSnapshotsTable;
  room_command_log: RoomCommandLogTable;
  room_request_outcomes: RoomRequestOutcomesTable;
  room_outbox: RoomOutboxTable;
  room_outbox_pruned: RoomOutboxPrunedTable;
  room_reactions: RoomReactionsTable;
  rooms: RoomsTable;
  room_list_entries: RoomListEntriesTable;
  wallets: WalletsTable;
  wallet_ledger: WalletLedgerTable;
  gift_catalog: GiftCatalogTable;
  users: UsersTable;
  meeting_codes: MeetingCodesTable;
  meeting_participant_ids: MeetingParticipantIdsTable;
  meeting_rooms: MeetingRoomsTable;
  meeting_participants: MeetingParticipantsTable;
  meeting_chats: MeetingChatsTable;
  voice_room_messages: VoiceRoomMessagesTable;
  voice_room_rankings: VoiceRoomRankingsTable;
  meeting_active_members: MeetingActiveMembersTable;
  notifications: NotificationsTable;
}
