/**
 * What the operator's routes answer (wallets, the gift catalog, node drain, the inspection
 * API): each is checked against its schema before it is sent, and the OpenAPI document shows
 * it as a named schema.
 */
import { z } from 'zod';
import { JsonUserId } from '../../shared/user-id.js';

export const TopUpReply = z
  .strictObject({
    user_id: JsonUserId,
    balance: z.int().describe('The balance after the top-up'),
    duplicate: z.boolean().describe('The request id was used before: nothing was credited now'),
  })
  .meta({ title: 'TopUpReply' });

export const CatalogGift = z
  .strictObject({ gift_id: z.string(), name: z.string(), price: z.int(), active: z.boolean() })
  .meta({ title: 'CatalogGift' });

export const CatalogGifts = z
  .strictObject({ list: z.array(CatalogGift).readonly() })
  .meta({ title: 'CatalogGifts' });

export const NodeState = z
  .strictObject({ node_id: z.string(), state: z.string().describe('running, draining, …') })
  .meta({ title: 'NodeState' });

export const DrainReport = NodeState.extend({
  cells_handed_over: z.int(),
  timed_out: z.boolean(),
  took_ms: z.number(),
}).meta({ title: 'DrainReport' });

const LoadedCell = z.strictObject({
  app_code: z.string(),
  room_id: z.string(),
  kind: z.string(),
  owner_node_id: z.string(),
  version: z.int(),
  snapshot_version: z.int(),
  lease_epoch: z.int(),
  persisted: z.boolean(),
  queued: z.int(),
  loaded_at_ms: z.int(),
  last_activity_ms: z.int(),
  batches: z.int(),
  commands: z.int(),
  refused: z.int(),
  last_commit_at_ms: z.int().nullable(),
});

export const LoadedCells = z
  .strictObject({
    node_id: z.string(),
    total: z.int(),
    counts: z.record(z.string(), z.int()).describe('Loaded cells by room kind'),
    cells: z.array(LoadedCell).readonly(),
    next_after: z.string().nullable(),
  })
  .meta({ title: 'LoadedCells' });

const LogEntry = z.strictObject({
  version: z.int(),
  request_id: z.string(),
  command_type: z.string(),
  event_types: z.array(z.unknown()).readonly(),
  command: z.unknown().describe('The command, secrets redacted'),
  events: z.unknown().describe('Its events, secrets redacted'),
  result: z.unknown(),
  owner_node_id: z.string(),
  lease_epoch: z.int(),
  created_at_ms: z.int(),
});

export const RoomLog = z
  .strictObject({
    app_code: z.string(),
    room_id: z.string(),
    kind: z.string(),
    version: z.int(),
    lease_epoch: z.int(),
    owner_node_id: z.string().nullable(),
    entries: z.array(LogEntry).readonly(),
    next_after_version: z.int().nullable(),
  })
  .meta({ title: 'RoomLog' });
