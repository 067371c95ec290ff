/**
 * The operator's view of the room cells, behind `X-Admin-Token` (ROOMS_ADMIN_TOKEN) like the
 * other admin routes; without a configured token every call is refused:
 *
 * - `GET /api/v1/admin/cells?kind=&app_code=&after=&limit=`: the cells loaded on this node
 *   (the one that answers: ask each node), with owner, version, epoch and what each
 *   committed since it was loaded, ordered by app and room;
 * - `GET /api/v1/admin/rooms/:room_id/log?app_code=&after_version=&limit=`: a room's command
 *   log from SQL, oldest first.
 *
 * The log shows commands and events with every secret replaced by `"[redacted]"`: a meeting's
 * CreateMeeting carries the bcrypt hash of its password, and no field named like a password,
 * hash, secret, token or signature ever leaves. The lease tokens are not shown either.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { errors } from '../../shared/error-codes.js';
import { parseInput } from '../../shared/parse-input.js';
import { sendOk } from '../../shared/http-envelope.js';
import { declaredReply } from '../declared-reply.js';
import * as ar from './admin-replies.js';
import { requireAdminToken } from './admin-token.js';
import { documented, jsonSchemaOf, replySchemaOf } from './openapi.js';

/** One loaded cell, as the host knows it. */
export interface LoadedCellView {
  readonly appCode: string;
  readonly roomId: string;
  readonly kind: string;
  readonly ownerNodeId: string;
  readonly version: number;
  readonly snapshotVersion: number;
  readonly leaseEpoch: number;
  /** False while the room has no row (a creation not committed yet). */
  readonly persisted: boolean;
  readonly queued: number;
  readonly loadedAtMs: number;
  readonly lastActivityMs: number;
  /** Commit transactions that wrote rows since the cell was loaded here. */
  readonly batches: number;
  /** Commands that committed a version since then. */
  readonly commands: number;
  readonly refused: number;
  readonly lastCommitAtMs: number | null;
}

/** Port: this node's loaded cells. */
export interface CellInspector {
  readonly nodeId: string;
  loadedCells(): readonly LoadedCellView[];
}

/** One row of a room's command log (the JSON columns still as text). */
export interface CommandLogRow {
  readonly version: number;
  readonly requestId: string;
  readonly commandType: string;
  readonly payload: string;
  readonly events: string;
  readonly result: string;
  readonly ownerNodeId: string;
  readonly leaseEpoch: number;
  readonly createdAtMs: number;
}

/** Port: the SQL command log and the room's row. */
export interface CommandLogReader {
  room(
    appCode: string,
    roomId: string,
  ): Promise<{
    kind: string;
    version: number;
    leaseEpoch: number;
    ownerNodeId: string | null;
  } | null>;
  read(
    appCode: string,
    roomId: string,
    afterVersion: number,
    limit: number,
  ): Promise<CommandLogRow[]>;
}

export interface AdminInspectionDeps {
  readonly cells: CellInspector;
  readonly log: CommandLogReader;
}

/** Most rows of one page (a larger `limit` is refused with 400, not clamped). */
export const MAX_CELLS_PAGE = 1000;
export const MAX_LOG_PAGE = 500;

const appCode = z.string().regex(/^[a-z0-9_-]{1,64}$/, 'lower-case letters, digits, _ or - (1-64)');
/** A room id as stored (`room_cells.room_id` is 128 characters): printable ASCII. */
const roomId = z.string().regex(/^[\x21-\x7e]{1,128}$/, 'printable ASCII, 1-128 characters');
/** A query-string integer: decimal digits only (no `0x10`, `1e2`, `-1`, `""` or spaces). */
const decimal = () =>
  z
    .string()
    .regex(/^\d{1,15}$/, 'decimal digits only')
    .transform(Number);
const cellsQuery = z.object({
  kind: z
    .string()
    .regex(/^[a-z_]{1,32}$/)
    .optional(),
  app_code: appCode.optional(),
  after: z.string().max(200).optional().describe('`next_after` of the previous page'),
  limit: decimal().pipe(z.number().min(1).max(MAX_CELLS_PAGE)).default(100),
});
const logParams = z.object({ room_id: roomId });
const logQuery = z.object({
  app_code: appCode.default('default'),
  after_version: decimal().default(0),
  limit: decimal().pipe(z.number().min(1).max(MAX_LOG_PAGE)).default(50),
});

const docs = {
  cells: documented({
    operationId: 'listLoadedCells',
    tag: 'admin',
    summary: 'The room cells loaded on this node, with owner, version, epoch and batch stats',
    description:
      'Ordered by app and room. `limit` 1-1000 (default 100; more is refused); ' +
      "`after` is the previous page's `next_after`.",
    access: 'admin',
    query: jsonSchemaOf(cellsQuery),
    data: replySchemaOf(ar.LoadedCells),
    responses: { 200: '`node_id`, `counts` by kind, `cells`, `next_after`' },
  }),
  log: documented({
    operationId: 'getRoomCommandLog',
    tag: 'admin',
    summary: "A room's command log, oldest first, secrets redacted",
    description:
      '`after_version` (default 0) and `limit` 1-500 (default 50; more is refused) page it; ' +
      'both are decimal digits only.',
    access: 'admin',
    params: jsonSchemaOf(logParams),
    query: jsonSchemaOf(logQuery),
    data: replySchemaOf(ar.RoomLog),
    refusals: [errors.CELL_NOT_FOUND],
    responses: {
      200: 'The room (`kind`, `version`, `lease_epoch`, `owner_node_id`), `entries`, `next_after_version`',
      404: 'No such room in this app',
    },
  }),
};

export function registerAdminInspectionRoutes(
  app: FastifyInstance,
  deps: AdminInspectionDeps & { readonly adminToken: string | null },
): void {
  void app.register(
    (scope, _options, done) => {
      scope.addHook('onRequest', requireAdminToken(deps.adminToken));

      scope.get('/cells', docs.cells, async (request, reply) => {
        const q = parse(cellsQuery, request.query);
        const all = deps.cells.loadedCells();
        const counts: Record<string, number> = {};
        for (const cell of all) counts[cell.kind] = (counts[cell.kind] ?? 0) + 1;
        const chosen = all
          .filter(
            (c) =>
              (q.kind === undefined || c.kind === q.kind) &&
              (q.app_code === undefined || c.appCode === q.app_code),
          )
          .map((c) => ({ cursor: `${c.appCode}/${c.roomId}`, cell: c }))
          .filter((c) => q.after === undefined || c.cursor > q.after)
          .sort((a, b) => (a.cursor < b.cursor ? -1 : a.cursor > b.cursor ? 1 : 0));
        const page = chosen.slice(0, q.limit);
        return sendOk(
          request,
          reply,
          declaredReply(ar.LoadedCells, 'listLoadedCells', {
            node_id: deps.cells.nodeId,
            total: all.length,
            counts,
            cells: page.map(({ cell }) => renderCell(cell)),
            next_after: chosen.length > q.limit ? page[page.length - 1]!.cursor : null,
          }),
        );
      });

      scope.get('/rooms/:room_id/log', docs.log, async (request, reply) => {
        const { room_id } = parse(logParams, request.params);
        const q = parse(logQuery, request.query);
        const room = await deps.log.room(q.app_code, room_id);
        if (!room) throw errors.CELL_NOT_FOUND(room_id, q.app_code);
        const rows = await deps.log.read(q.app_code, room_id, q.after_version, q.limit);
        return sendOk(
          request,
          reply,
          declaredReply(ar.RoomLog, 'getRoomCommandLog', {
            app_code: q.app_code,
            room_id,
            kind: room.kind,
            version: room.version,
            lease_epoch: room.leaseEpoch,
            owner_node_id: room.ownerNodeId,
            entries: rows.map(renderLogRow),
            next_after_version:
              rows.length === q.limit && rows[rows.length - 1]!.version < room.version
                ? rows[rows.length - 1]!.version
                : null,
          }),
        );
      });
      done();
    },
    { prefix: '/api/v1/admin' },
  );
}

function renderCell(c: LoadedCellView): Record<string, unknown> {
  return {
    app_code: c.appCode,
    room_id: c.roomId,
    kind: c.kind,
    owner_node_id: c.ownerNodeId,
    version: c.version,
    snapshot_version: c.snapshotVersion,
    lease_epoch: c.leaseEpoch,
    persisted: c.persisted,
    queued: c.queued,
    loaded_at_ms: c.loadedAtMs,
    last_activity_ms: c.lastActivityMs,
    batches: c.batches,
    commands: c.commands,
    refused: c.refused,
    last_commit_at_ms: c.lastCommitAtMs,
  };
}

function renderLogRow(r: CommandLogRow): Record<string, unknown> {
  const events = redact(parseJson(r.events));
  return {
    version: r.version,
    request_id: r.requestId,
    command_type: r.commandType,
    event_types: Array.isArray(events)
      ? events.map((e) => (e as { type?: unknown } | null)?.type ?? null)
      : [],
    command: redact(parseJson(r.payload)),
    events,
    result: redact(parseJson(r.result)),
    owner_node_id: r.ownerNodeId,
    lease_epoch: r.leaseEpoch,
    created_at_ms: r.createdAtMs,
  };
}

/** Keys whose string (or structured) value is a secret, whatever the command. */
const SECRET_KEY = /pass(word|wd)|secret|token|hash|signature|credential/i;
export const REDACTED = '[redacted]';

/** A copy of `value` with every secret-named field's value replaced (null stays null). */
export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    const secret = SECRET_KEY.test(key) && field !== null && typeof field !== 'boolean';
    out[key] = secret ? REDACTED : redact(field);
  }
  return out;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  return parseInput(schema, value ?? {}, errors.BAD_REQUEST);
}
