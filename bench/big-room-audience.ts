/**
 * The audience tier of `bench:big-room`: one voice room on one real node (embedded SQLite),
 * BENCH_AUDIENCE (10,000) listeners joining at BENCH_JOIN_RATE (500/s) through the node's
 * voice API while every present listener heartbeats every 30 s, and BENCH_FOLLOWERS (20)
 * members following the room over `/ws`. Measured:
 * - frames delivered to a follower per listener join, while the room grows: with the crowd
 *   (the default announced size, 200) and, on a second node, with every join announced
 *   (ROOMS_VOICE_ANNOUNCED_AUDIENCE=0, BENCH_ANNOUNCED_AUDIENCE_JOINS (1,000) joins);
 * - the seat commands' p99 (REST MicUp and MicDown by a seat holder, BENCH_SEAT_ROUNDS (100)
 *   rounds after 10 of warm-up) in that room, the full audience present and heartbeating,
 *   against a room of 100 on the same node, in interleaved rounds;
 * - the node's heap after a GC, at both sizes.
 * The listeners are account ids the voice API takes directly (no socket each): the costs
 * measured are the room's, not 10,000 connections'.
 */
import type { TestClient } from '../src/edge/ws/testing/ws-client.js';
import { startMeetingNode, type MeetingNode } from '../src/main/testing/meeting-node.js';
import { quantile } from './load.js';

const AUDIENCE = Number(process.env.BENCH_AUDIENCE ?? 10_000);
const JOIN_RATE = Number(process.env.BENCH_JOIN_RATE ?? 500);
const FOLLOWERS = Number(process.env.BENCH_FOLLOWERS ?? 20);
const SEAT_ROUNDS = Number(process.env.BENCH_SEAT_ROUNDS ?? 100);
const ANNOUNCED_JOINS = Number(process.env.BENCH_ANNOUNCED_AUDIENCE_JOINS ?? 1_000);
/** How often each listener heartbeats; 0: never (to see what the heartbeats cost). */
const HEARTBEAT_MS = Number(process.env.BENCH_HEARTBEAT_MS ?? 30_000);
const SMALL = 100;
/** Listener account ids, far from the registered users'. */
const LISTENER_BASE = 7_000_000;

interface Room {
  readonly started: MeetingNode;
  readonly roomId: string;
  readonly followers: TestClient[];
}

const FOLLOWER_NAMES = Array.from({ length: FOLLOWERS }, (_, i) => `follower${i}`);

function openNode(env: Record<string, string>): Promise<MeetingNode> {
  return startMeetingNode(['owner', 'seat', ...FOLLOWER_NAMES], {
    ROOMS_ROOM_CREATE_LIMIT: '0',
    ROOMS_MAX_OPEN_ROOMS_PER_OWNER: '0',
    ROOMS_WS_MAX_FRAMES_PER_S: '100000',
    ROOMS_WS_FRAME_BURST: '100000',
    ...env,
  });
}

/** A room the owner, the seat user and the followers (on `/ws`) are in. */
async function openRoom(started: MeetingNode): Promise<Room> {
  const { api } = started;
  const post = async (who: string, path: string, body: object = {}) => {
    const res = await api.call('POST', `/voice/rooms${path}`, { as: who, body });
    if (res.status >= 300) throw new Error(`${path}: ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, unknown>;
  };
  const { room_id: roomId } = (await post('owner', '', { title: 'big room' })) as {
    room_id: string;
  };
  const followers: TestClient[] = [];
  for (const who of ['owner', 'seat', ...FOLLOWER_NAMES]) {
    await post(who, `/${roomId}/join`);
    if (!who.startsWith('follower')) continue;
    const socket = await started.socket(who);
    const ack = await socket.request('room.subscribe', { room_id: roomId });
    if (ack.code !== 0) throw new Error(`subscribe: ${ack.message}`);
    followers.push(socket);
  }
  return { started, roomId, followers };
}

/** The voice API's call for listener `i` (JoinRoom, RoomHeartbeat). */
function listenerCall(room: Room, type: 'JoinRoom' | 'RoomHeartbeat', i: number, seq: number) {
  const { node } = room.started;
  return node.voice.api.call(type, {
    app_code: 'default',
    room_id: room.roomId,
    request_id: `bench:${type}:${i}:${seq}`,
    user_id: String(LISTENER_BASE + i),
  });
}

/**
 * Listeners `from`…`to - 1` join at JOIN_RATE; every present listener heartbeats every 30 s
 * meanwhile (and until `stop` is called). Resolves once all joined.
 */
function grow(room: Room, from: number, to: number) {
  const joinedAt: number[] = [];
  const failures: unknown[] = [];
  let heartbeats = 0;
  let stopped = false;
  const beat = setInterval(() => {
    if (HEARTBEAT_MS === 0) return;
    // Each present listener once per HEARTBEAT_MS: the ones due in this tick.
    const now = Date.now();
    for (let i = 0; i < joinedAt.length; i++) {
      if (now - joinedAt[i]! >= HEARTBEAT_MS) {
        joinedAt[i] = now;
        void listenerCall(room, 'RoomHeartbeat', from + i, ++heartbeats).catch(() => undefined);
      }
    }
  }, 100);
  const joined = (async () => {
    const started = Date.now();
    for (let i = from; i < to && !stopped; i++) {
      const due = started + ((i - from) * 1000) / JOIN_RATE;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      void listenerCall(room, 'JoinRoom', i, 0).then(
        // Each listener's first heartbeat at a random point of its first 30 s: spread out.
        () => joinedAt.push(Date.now() - Math.random() * HEARTBEAT_MS),
        (error: unknown) => failures.push(error),
      );
    }
    // The last joins in flight.
    while (joinedAt.length + failures.length < to - from) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (failures.length > 0)
      throw new Error(`${failures.length} joins failed: ${String(failures[0])}`);
  })();
  return {
    joined,
    get heartbeats() {
      return heartbeats;
    },
    stop: () => {
      stopped = true;
      clearInterval(beat);
    },
  };
}

/**
 * Waits until the node's outbox has nothing left to settle; resolves with how long it took
 * (s). Each join wrote an outbox row, which the relay settles (here: skipped, no webhook) on
 * the one SQLite connection the commits use too: measured apart from the room's size.
 */
async function outboxDrained(started: MeetingNode): Promise<number> {
  const begin = Date.now();
  for (;;) {
    const row = await started.node.sql.db
      .selectFrom('room_outbox')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', 'in', ['pending', 'retryable', 'delivering'])
      .executeTakeFirstOrThrow();
    if (Number(row.n) === 0) return (Date.now() - begin) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Frames the followers received so far, in all. */
const framesOf = (room: Room) => room.followers.reduce((n, f) => n + f.frames.length, 0);

const WARM_UP_ROUNDS = 10;

/** One round of the seat user's REST MicUp then MicDown in `room`; their times (ms). */
async function seatRound(room: Room, round: number): Promise<number[]> {
  const { api } = room.started;
  const times: number[] = [];
  for (const action of ['mic/up', 'mic/down']) {
    const body = action === 'mic/up' ? { seat_index: 0 } : {};
    const started = performance.now();
    const res = await api.call('POST', `/voice/rooms/${room.roomId}/${action}`, {
      as: 'seat',
      body: { request_id: `seat-${round}-${action}`, ...body },
    });
    times.push(performance.now() - started);
    if (res.status >= 300) throw new Error(`${action}: ${JSON.stringify(res.body)}`);
  }
  return times;
}

/** p50 and p99 of each room's seat commands, rounds interleaved (the order alternates). */
async function seatLatencies(rooms: readonly Room[]) {
  const times = rooms.map(() => [] as number[]);
  for (let round = 0; round < WARM_UP_ROUNDS + SEAT_ROUNDS; round++) {
    const order = round % 2 === 0 ? rooms.map((_, i) => i) : rooms.map((_, i) => i).reverse();
    for (const i of order) {
      const measured = await seatRound(rooms[i]!, round);
      if (round >= WARM_UP_ROUNDS) times[i]!.push(...measured);
    }
  }
  return times.map((t) => {
    t.sort((a, b) => a - b);
    return { p50: quantile(t, 0.5), p99: quantile(t, 0.99) };
  });
}

function heapMiB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

export interface AudienceFigures {
  readonly seatP99Small: number;
  readonly seatP99Large: number;
  readonly framesPerJoinCrowd: number;
  readonly framesPerJoinAnnounced: number;
}

export async function audienceTier(): Promise<AudienceFigures> {
  const fmt = (n: number) => n.toFixed(2);
  const base = FOLLOWERS + 2;
  const node = await openNode({});
  let small: { p50: number; p99: number };
  let large: { p50: number; p99: number };
  let framesPerJoinCrowd: number;
  try {
    const smallRoom = await openRoom(node);
    const bigRoom = await openRoom(node);
    const few = grow(smallRoom, 0, SMALL - base);
    await few.joined;
    const heapSmall = heapMiB();
    const framesBefore = framesOf(bigRoom);
    const growth = grow(bigRoom, SMALL, SMALL + AUDIENCE - base);
    const startedAt = Date.now();
    await growth.joined;
    const joinSeconds = (Date.now() - startedAt) / 1000;
    const joins = AUDIENCE - base;
    framesPerJoinCrowd = (framesOf(bigRoom) - framesBefore) / FOLLOWERS / joins;
    const drainSeconds = await outboxDrained(node);
    [small, large] = (await seatLatencies([smallRoom, bigRoom])) as [
      { p50: number; p99: number },
      { p50: number; p99: number },
    ];
    few.stop();
    growth.stop();
    const heapLarge = heapMiB();
    console.log(
      `audience tier: 1 voice room, ${FOLLOWERS} followers on /ws, listeners join at ` +
        `${JOIN_RATE}/s (${joins} in ${joinSeconds.toFixed(1)} s) and heartbeat every 30 s ` +
        `(${growth.heartbeats} heartbeats), crowd past 200 present; the relay settled their ` +
        `outbox rows ${drainSeconds.toFixed(1)} s after the last join (SQLite: one connection ` +
        `for commits and relay alike), then the seats were measured`,
    );
    console.log(
      `  seat commands (REST MicUp/MicDown, ${SEAT_ROUNDS} rounds interleaved with a room of ` +
        `${SMALL}): ${SMALL} present p50 ${fmt(small.p50)} ms p99 ${fmt(small.p99)} ms; ` +
        `${AUDIENCE} present p50 ${fmt(large.p50)} ms p99 ${fmt(large.p99)} ms ` +
        `(ratio ${fmt(large.p99 / small.p99)})`,
    );
    console.log(
      `  frames per listener join, per follower: ${framesPerJoinCrowd.toFixed(4)}; heap ` +
        `${heapSmall.toFixed(0)} MiB with ${SMALL} present, ${heapLarge.toFixed(0)} MiB with ` +
        `${AUDIENCE} more`,
    );
  } finally {
    await node.close();
  }
  const announcedNode = await openNode({ ROOMS_VOICE_ANNOUNCED_AUDIENCE: '0' });
  let framesPerJoinAnnounced: number;
  try {
    const announced = await openRoom(announcedNode);
    const before = framesOf(announced);
    const growth = grow(announced, 0, ANNOUNCED_JOINS);
    await growth.joined;
    growth.stop();
    // The last frames on their way to the sockets.
    await new Promise((resolve) => setTimeout(resolve, 500));
    framesPerJoinAnnounced = (framesOf(announced) - before) / FOLLOWERS / ANNOUNCED_JOINS;
    console.log(
      `  every join announced (ROOMS_VOICE_ANNOUNCED_AUDIENCE=0), ${ANNOUNCED_JOINS} joins: ` +
        `${framesPerJoinAnnounced.toFixed(4)} frames per join, per follower`,
    );
  } finally {
    await announcedNode.close();
  }
  return {
    seatP99Small: small.p99,
    seatP99Large: large.p99,
    framesPerJoinCrowd,
    framesPerJoinAnnounced,
  };
}
