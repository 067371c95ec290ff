/**
 * `logs`: what log retention (src/cell/log-retention.ts) leaves of a long-running room, and
 * that the room still activates cold and still replays afterwards. Per size (commands sent
 * to one room), from scratch, on the embedded backend (SQLite + in-memory lease) and, when
 * they answer, on MariaDB + Redis:
 *
 * 1. A voice room (the real room kind with its SQL hooks, src/voice-room/sql/) on a real
 *    CellHost (the product's snapshot interval, 100, and lease TTL, 10 s) takes that many
 *    commands, every one with a request id of its own (./logs-workload.ts: 16 members'
 *    heartbeats, leaves, rejoins and mic turns, and a refused heartbeat per round).
 * 2. The host crashes (no snapshot on the way out), and three fresh hosts one after another
 *    activate the room cold and crash (the baseline: activation before any sweep; each must
 *    rebuild the state the first host had); then the room's rows of `room_command_log`,
 *    `room_request_outcomes` and `room_outbox` are counted.
 * 3. The retention sweep runs with the product's windows (ROOMS_COMMAND_LOG_RETENTION_MS and
 *    ROOMS_REQUEST_ID_RETENTION_MS, 7 days each) on a clock 7 days and a second ahead, and
 *    again until it deletes nothing (each sweep does at most 20 batches of 500 rows per
 *    table; `sweeps` counts the last, empty one too); the rows are counted again. The command log must then hold exactly the rows
 *    above the room's snapshot, and every outcome left must name a command still logged.
 * 4. Three more fresh hosts activate the room cold, one after another: each must rebuild
 *    the state before the crash, and on the last a next command must get the next version.
 *    A replay from an event 100 events back (its command's log row deleted by the sweep) must
 *    answer with every frame up to the last event, not "refetch".
 *
 * Activation times are the median of the three, each from the first call on a fresh host to
 * the room's state (EnsureOwner, the epoch bump, snapshot + the log after it). A check that
 * fails throws: the size is reported failed. No plots: the figures are counts per size.
 */
import { isDeepStrictEqual } from 'node:util';
import { sqlLogRetentionStore } from '../../src/adapters/sql/log-retention-store.js';
import { sqlRoomFrameLog } from '../../src/adapters/sql/room-frame-log.js';
import type { CellHost } from '../../src/cell/host.js';
import type { CellKey } from '../../src/cell/lease.js';
import { LogRetention } from '../../src/cell/log-retention.js';
import {
  fastConfig,
  mariadbRedisBackend,
  silentLogger,
  sleep,
  sqliteMemoryBackend,
  startHost,
  type TestBackend,
  type TestHost,
} from '../../src/cell/testing/harness.js';
import { replayFrames } from '../../src/realtime/frame-replay.js';
import { mariadbAvailable, redisAvailable } from '../../src/testing/backends.js';
import { voiceRoomFrames } from '../../src/voice-room/api/voice-frames.js';
import { voiceRoomWithSql } from '../../src/voice-room/sql/index.js';
import { median } from '../load.js';
import type { ScaleDimension, ScaleFigures } from './dimension.js';
import { DEFAULT_WORKLOAD, GHOST, workloadSteps } from './logs-workload.js';

const DAY_MS = 24 * 3_600_000;
/** The product's defaults (src/main/config/schema.ts). */
const RETENTION_MS = 7 * DAY_MS;
const SNAPSHOT_EVERY = 100;
/** How far back the replay starts, in outbox events (the replay answers at most 200). */
const REPLAY_BACK = 100;
/**
 * The driving host's lease: the product's (ROOMS_LEASE_TTL_MS). The harness's 900 ms is too
 * short for a room that never rests: a renewal waits on the cell's lane behind up to a full
 * batch's worth (256) of commits, which on a loaded 2-core machine can take longer.
 */
const DRIVE_LEASE_TTL_MS = 10_000;
/** Cold activations per measurement (each on a fresh host); the median is reported. */
const ACTIVATIONS = 3;

const voice = voiceRoomWithSql();

class CheckFailed extends Error {}
function check(ok: boolean, what: string): void {
  if (!ok) throw new CheckFailed(what);
}

async function rowsOf(backend: TestBackend, key: CellKey) {
  const db = backend.inspect.db;
  const count = async (table: 'room_command_log' | 'room_request_outcomes' | 'room_outbox') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select(({ fn }) => fn.countAll().as('n'))
          .where('app_code', '=', key.appCode)
          .where('room_id', '=', key.roomId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const cell = await db
    .selectFrom('room_cells')
    .select(['version', 'snapshot_version'])
    .where('app_code', '=', key.appCode)
    .where('room_id', '=', key.roomId)
    .executeTakeFirstOrThrow();
  return {
    log: await count('room_command_log'),
    outcomes: await count('room_request_outcomes'),
    outbox: await count('room_outbox'),
    version: Number(cell.version),
    snapshot: Number(cell.snapshot_version),
  };
}

/** Outcomes whose request id the room's log does not hold (must be none after the sweep). */
async function outcomesWithoutLog(backend: TestBackend, key: CellKey): Promise<number> {
  const row = await backend.inspect.db
    .selectFrom('room_request_outcomes as o')
    .select(({ fn }) => fn.countAll().as('n'))
    .where('o.app_code', '=', key.appCode)
    .where('o.room_id', '=', key.roomId)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('room_command_log as l')
            .select('l.version')
            .whereRef('l.app_code', '=', 'o.app_code')
            .whereRef('l.room_id', '=', 'o.room_id')
            .whereRef('l.request_id', '=', 'o.request_id'),
        ),
      ),
    )
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Sends the workload; refusals other than the ghost's heartbeat fail the run. */
async function drive(host: CellHost, key: CellKey, commands: number): Promise<number> {
  let refused = 0;
  const send = async (command: Parameters<typeof voice.decide>[1], requestId: string) => {
    try {
      const routed = await host.execute(voice, key, command, { requestId });
      check(routed.kind === 'local', `${requestId}: not the owner`);
    } catch (error) {
      const ghost = command.type === 'RoomHeartbeat' && command.user_id === GHOST;
      if (!ghost || (error as { code?: string }).code !== 'NOT_IN_ROOM') throw error;
      refused += 1;
    }
  };
  for (const step of workloadSteps(DEFAULT_WORKLOAD, commands)) {
    await Promise.all(step.together.map((c) => send(c.command, c.requestId)));
  }
  return refused;
}

/** The room's state from `host`, activating it there; ms of that first call. */
async function activate(host: CellHost, key: CellKey) {
  // The crashed owner's lease runs out first (the harness's TTL, 900 ms; waited before).
  for (let attempt = 0; ; attempt++) {
    const started = performance.now();
    const routed = await host.query(voice, key, (state, version) => ({ state, version }));
    const ms = performance.now() - started;
    if (routed.kind === 'local') return { ...routed.value, ms };
    check(attempt < 50, 'the fresh host never became the owner');
    await sleep(100);
  }
}

/** Kills `host` and waits until its leases (taken with `leaseTtlMs`) have run out. */
async function crash(host: TestHost, leaseTtlMs = fastConfig.leaseTtlMs): Promise<void> {
  await host.kill();
  await sleep(leaseTtlMs + 200);
}

/**
 * ACTIVATIONS cold activations, each on a fresh host after the one before crashed: each
 * must rebuild `expected`. The median ms, and the last host, still running.
 */
async function coldActivations(
  start: () => Promise<TestHost>,
  key: CellKey,
  expected: { state: unknown; version: number },
  when: string,
): Promise<{ ms: number; host: TestHost }> {
  const times: number[] = [];
  for (;;) {
    const host = await start();
    const got = await activate(host.host, key);
    check(got.version === expected.version, `version after activation ${when}`);
    check(isDeepStrictEqual(got.state, expected.state), `state after activation ${when}`);
    times.push(got.ms);
    if (times.length === ACTIVATIONS) return { ms: median(times), host };
    await crash(host);
  }
}

async function measure(backend: TestBackend, commands: number): Promise<ScaleFigures> {
  const key: CellKey = { appCode: 'default', roomId: `logs-${commands}-${Date.now()}` };
  // The activating hosts keep the harness's short lease (900 ms), so a crash costs a second.
  const start = () =>
    startHost(backend, { domains: [voice], config: { snapshotEvery: SNAPSHOT_EVERY } });

  const a = await startHost(backend, {
    domains: [voice],
    config: { snapshotEvery: SNAPSHOT_EVERY, leaseTtlMs: DRIVE_LEASE_TTL_MS },
  });
  const driven = performance.now();
  const refused = await drive(a.host, key, commands);
  const driveS = (performance.now() - driven) / 1000;
  const before = await activate(a.host, key); // loaded: no activation, just the state
  await crash(a, DRIVE_LEASE_TTL_MS);

  // Baseline: activations on the whole log, before any sweep.
  const baseline = await coldActivations(start, key, before, 'before the sweep');
  await crash(baseline.host);
  const rowsBefore = await rowsOf(backend, key);
  check(rowsBefore.version === before.version, 'the crashed owner committed everything');
  check(rowsBefore.log === rowsBefore.version, 'one log row per version before the sweep');

  const db = backend.inspect.db;
  const outbox = await db
    .selectFrom('room_outbox')
    .select(['event_id', 'room_version'])
    .where('app_code', '=', key.appCode)
    .where('room_id', '=', key.roomId)
    .orderBy('room_version')
    .orderBy('id')
    .execute();
  const anchor = outbox[Math.max(0, outbox.length - 1 - REPLAY_BACK)]!;
  const last = outbox.at(-1)!;

  const retention = new LogRetention(
    { logMs: RETENTION_MS, requestIdMs: RETENTION_MS },
    {
      store: sqlLogRetentionStore(db),
      clock: { nowMs: () => Date.now() + RETENTION_MS + 1_000 },
      logger: silentLogger,
    },
  );
  const swept = performance.now();
  let sweeps = 0;
  let deleted = 0;
  for (;;) {
    const n = await retention.sweep();
    sweeps += 1;
    deleted += n;
    if (n === 0) break;
    check(sweeps < 1_000, 'the sweep never finished');
  }
  const sweepMs = performance.now() - swept;
  const rowsAfter = await rowsOf(backend, key);
  check(
    rowsAfter.log === rowsBefore.version - rowsBefore.snapshot,
    `log rows after the sweep: ${rowsAfter.log}, expected the ${rowsBefore.version - rowsBefore.snapshot} above the snapshot`,
  );
  check(
    (await outcomesWithoutLog(backend, key)) === 0,
    'every outcome left names a logged command',
  );
  check(
    deleted === rowsBefore.log - rowsAfter.log + rowsBefore.outcomes - rowsAfter.outcomes,
    'the sweeps deleted what disappeared',
  );

  const after = await coldActivations(start, key, before, 'after the sweep');
  try {
    const next = await after.host.host.execute(
      voice,
      key,
      { type: 'RoomHeartbeat', user_id: 'u0' },
      { requestId: 'after-sweep' },
    );
    check(
      next.kind === 'local' && next.value.version === before.version + 1,
      'the next command gets the next version',
    );
    check(Number(anchor.room_version) <= rowsBefore.snapshot, "the replay anchor's log row went");
    const answer = await replayFrames(
      sqlRoomFrameLog(db),
      new Map([['voice_room', voiceRoomFrames]]),
      key,
      { eventId: anchor.event_id },
    );
    check('replay' in answer, `replay from ${anchor.event_id}: refetch`);
    const frames = 'replay' in answer ? answer.replay : [];
    const lastId = (frames.at(-1) as { data?: { event_id?: string } } | undefined)?.data?.event_id;
    check(
      frames.length >= Math.min(REPLAY_BACK, outbox.length - 1) && lastId === last.event_id,
      `replay: ${frames.length} frames ending at ${lastId}, expected up to ${last.event_id}`,
    );
    console.log(
      `  ${backend.name}, ${commands} commands (${(commands / driveS).toFixed(0)}/s, ${refused} refused as planned): ` +
        `log ${rowsBefore.log} → ${rowsAfter.log} rows, outcomes ${rowsBefore.outcomes} → ${rowsAfter.outcomes}, ` +
        `outbox ${rowsBefore.outbox} (untouched); ${sweeps} sweep(s) in ${sweepMs.toFixed(0)} ms; ` +
        `cold activation (median of ${ACTIVATIONS}) ${baseline.ms.toFixed(1)} ms before, ${after.ms.toFixed(1)} ms after (state equal); ` +
        `replay of ${frames.length} frames from v${anchor.room_version} (snapshot v${rowsBefore.snapshot})`,
    );
    return {
      log_before: rowsBefore.log,
      log_after: rowsAfter.log,
      outcomes_before: rowsBefore.outcomes,
      outcomes_after: rowsAfter.outcomes,
      outbox: rowsAfter.outbox,
      sweeps,
      sweep_ms: sweepMs,
      activation_before_ms: baseline.ms,
      activation_ms: after.ms,
      replay_frames: frames.length,
    };
  } finally {
    await after.host.kill();
  }
}

async function on(open: () => Promise<TestBackend>, commands: number): Promise<ScaleFigures> {
  const backend = await open();
  try {
    return await measure(backend, commands);
  } finally {
    await backend.close();
  }
}

async function run(commands: number): Promise<ScaleFigures> {
  const sqlite = await on(sqliteMemoryBackend, commands);
  const figures: ScaleFigures = Object.fromEntries(
    Object.entries(sqlite).map(([k, v]) => [`sqlite_${k}`, v]),
  );
  if (!(await mariadbAvailable()) || !(await redisAvailable())) {
    console.log('  MariaDB or Redis not answering: SQLite only');
    return figures;
  }
  return { ...(await on(mariadbRedisBackend, commands)), ...figures };
}

export const logs: ScaleDimension = {
  name: 'logs',
  what: 'rows per room of a long-running voice room before and after log retention; cold activation and replay after it',
  unit: 'commands per room',
  sizes: [1_000, 10_000, 50_000],
  plots: [],
  run,
};
