/**
 * `npm run bench:voice-room`: one voice room on one real node (embedded SQLite; then MariaDB
 * + Redis when they answer) with BENCH_FOLLOWERS (2,000) members following it over `/ws`
 * (a child process of clients, bench/voice-room-clients.ts), commands sent through the
 * node's voice API (what REST and gRPC call):
 * - public chat: the highest rate, stepped up, at which every line reaches every follower
 *   with send → all p99 under 100 ms (open loop; a step holds when the sends kept the pace
 *   and nothing was lost);
 * - seats: a seat holder's MicUp / MicDown at 20/s, p99 without chat and with chat at half
 *   the sustained rate, in interleaved rounds (ratio = median of per-round quiet / loaded);
 * - gifts: a room of 8 senders, closed loop, on a node keeping the rankings against one that
 *   does not (ROOMS_VOICE_RANKINGS=false), in interleaved rounds (ratio = on / off).
 * Quote ratios and medians: the machine is shared and noisy. Last lines machine-readable.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { clusterSkipReason } from '../src/testing/backends.js';
import type { RoomsNode } from '../src/main/node.js';
import { openBenchNode } from './bench-node.js';
import { ask } from './fanout-phase.js';
import { describeRatios, interleave, median, quantile, runLoad, type LoadResult } from './load.js';

const FOLLOWERS = Number(process.env.BENCH_FOLLOWERS ?? 2_000);
const CHAT_RATES = (process.env.BENCH_CHAT_RATES ?? '5,10,15,20,25,30,40,50,75,100')
  .split(',')
  .map(Number);
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? 3);
const SEAT_RATE = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SEAT_SECONDS = Number(process.env.BENCH_SEAT_SECONDS ?? 3);
const GIFT_SECONDS = Number(process.env.BENCH_SECONDS ?? 1.5);
/** `gifts`: only the gift comparison (no sockets), to iterate on the rankings' cost. */
const GIFTS_ONLY = process.env.BENCH_VOICE_ONLY === 'gifts';
const P99_LIMIT_MS = 100;
const SECRET = 'bench-voice-room-secret-0123456789abcdef';
const LISTENER_BASE = 7_000_000;
const CHATTERS = ['101', '102', '103', '104'];
const SEAT_USER = '201';
const wall = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const ENV = {
  ROOMS_JWT_SECRET: SECRET,
  ROOMS_VOICE_CHATS_PER_USER: '0',
  // Nobody heartbeats here: presence must outlast the run.
  ROOMS_PRESENCE_TIMEOUT_MS: '3600000',
  ROOMS_PUBLISH_TIMEOUT_MS: '600000',
};

type Voice = RoomsNode['voice']['api'];

async function call(voice: Voice, method: string, body: Record<string, unknown>) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- every voice RPC by name
  return (await voice.call(method as any, { app_code: 'default', ...body })) as Record<
    string,
    unknown
  >;
}

let requests = 0;
const rid = (what: string) => `bench:${what}:${++requests}`;

async function createRoom(voice: Voice, members: readonly string[]): Promise<string> {
  const { room_id } = await call(voice, 'CreateRoom', {
    owner_user_id: '1',
    title: 'bench',
    seat_count: 8,
    request_id: rid('create'),
  });
  const roomId = String(room_id);
  for (let i = 0; i < members.length; i += 100) {
    await Promise.all(
      members
        .slice(i, i + 100)
        .map((user_id) =>
          call(voice, 'JoinRoom', { room_id: roomId, user_id, request_id: rid('join') }),
        ),
    );
  }
  return roomId;
}

interface ChatStep {
  readonly rate: number;
  readonly sentPerS: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly lost: number;
  readonly ok: boolean;
}

/** Chat lines at `rate`/s for `seconds` (open loop); each line's send → all followers time. */
async function chatAt(
  voice: Voice,
  clients: ChildProcess,
  roomId: string,
  rate: number,
  seconds: number,
): Promise<ChatStep> {
  const sent = new Map<number, number>();
  const started = performance.now();
  const total = Math.round(rate * seconds);
  const inFlight: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const at = wall();
    inFlight.push(
      call(voice, 'SendRoomMessage', {
        room_id: roomId,
        user_id: CHATTERS[i % CHATTERS.length],
        content: `line ${i} at ${rate}/s`,
        request_id: rid('chat'),
      }).then((reply) => sent.set(Number(reply.message_id), at)),
    );
  }
  await Promise.allSettled(inFlight);
  const sentPerS = sent.size / ((performance.now() - started) / 1000);
  await sleep(1_000);
  const { list } = await ask<{ list: [number, number, number][] }>(
    clients,
    { type: 'arrivals', ids: [...sent.keys()] },
    'arrivals',
  );
  const latencies: number[] = [];
  let lost = total - sent.size;
  for (const [id, count, lastMs] of list) {
    if (count < FOLLOWERS) lost++;
    else latencies.push(lastMs - sent.get(id)!);
  }
  latencies.sort((a, b) => a - b);
  const p99Ms = quantile(latencies, 0.99);
  return {
    rate,
    sentPerS,
    p50Ms: quantile(latencies, 0.5),
    p99Ms,
    lost,
    ok: lost === 0 && sentPerS >= rate * 0.95 && p99Ms < P99_LIMIT_MS,
  };
}

/** The seat holder's MicUp and MicDown, alternating, at SEAT_RATE/s for `seconds`. */
async function seatsFor(voice: Voice, roomId: string, seconds: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const total = Math.round(SEAT_RATE * seconds);
  let chain = Promise.resolve();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / SEAT_RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    // One after another: MicDown needs the MicUp before it.
    const op = i % 2 === 0 ? 'MicUp' : 'MicDown';
    chain = chain.then(async () => {
      const t0 = performance.now();
      try {
        await call(voice, op, {
          room_id: roomId,
          user_id: SEAT_USER,
          ...(op === 'MicUp' ? { seat_index: 0 } : {}),
          request_id: rid('seat'),
        });
        latencies.push(performance.now() - t0);
      } catch {
        errors++;
      }
    });
  }
  await chain;
  const secondsTaken = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    ops: latencies.length,
    errors,
    seconds: secondsTaken,
    perSecond: latencies.length / secondsTaken,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
  };
}

/** Chat at `rate` in the background while `run` runs. */
async function withChat<T>(voice: Voice, roomId: string, rate: number, run: () => Promise<T>) {
  let stop = false;
  let i = 0;
  const chatting = (async () => {
    const started = performance.now();
    while (!stop) {
      const due = started + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      void call(voice, 'SendRoomMessage', {
        room_id: roomId,
        user_id: CHATTERS[i % CHATTERS.length],
        content: `background ${i}`,
        request_id: rid('chat'),
      }).catch(() => undefined);
      i++;
    }
  })();
  try {
    return await run();
  } finally {
    stop = true;
    await chatting;
  }
}

async function giftRoom(node: RoomsNode): Promise<{ roomId: string; senders: string[] }> {
  const senders = Array.from({ length: 8 }, (_, i) => String(301 + i));
  const roomId = await createRoom(node.voice.api, [...senders, '400']);
  await node.voice.store.putGift(
    'default',
    { gift_id: 'rose', name: 'Rose', price: 1, active: true },
    Date.now(),
  );
  for (const s of senders) {
    await node.voice.store.topUp('default', s, 1_000_000_000, rid('topup'), Date.now());
  }
  return { roomId, senders };
}

function gifts(node: RoomsNode, room: { roomId: string; senders: string[] }) {
  return () =>
    runLoad(8, GIFT_SECONDS * 1000, (worker) =>
      call(node.voice.api, 'SendGift', {
        room_id: room.roomId,
        sender_user_id: room.senders[worker],
        receiver_user_ids: ['400'],
        gift_id: 'rose',
        count: 1,
        request_id: rid('gift'),
      }),
    );
}

/** Chat to the followers stepped up, then seats quiet and under chat. */
async function chatAndSeats(label: string, on: { base: string; node: RoomsNode }) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const clients = fork(path.join(here, 'voice-room-clients.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    await new Promise<void>((resolve) => clients.once('message', () => resolve()));
    const voice = on.node.voice.api;
    const followers = Array.from({ length: FOLLOWERS }, (_, i) => String(LISTENER_BASE + i));
    const roomId = await createRoom(voice, [...CHATTERS, SEAT_USER, ...followers]);
    const connected = await ask<{ ok: number; failed: number }>(
      clients,
      {
        type: 'connect',
        url: `${on.base.replace(/^http/, 'ws')}/ws`,
        secret: SECRET,
        userIds: followers,
        roomId,
      },
      'connected',
    );
    if (connected.failed > 0) throw new Error(`${connected.failed} followers failed to subscribe`);
    console.log(`${label}: ${connected.ok} followers subscribed`);

    // Chat: step the rate up until a step fails.
    let sustained = 0;
    let atSustained: ChatStep | null = null;
    for (const rate of CHAT_RATES) {
      const step = await chatAt(voice, clients, roomId, rate, STEP_SECONDS);
      console.log(
        `${label} chat ${rate}/s: sent ${step.sentPerS.toFixed(0)}/s, send→all ${FOLLOWERS} p50 ${step.p50Ms.toFixed(1)} ms p99 ${step.p99Ms.toFixed(1)} ms, lost ${step.lost}${step.ok ? '' : ' (over)'}`,
      );
      if (!step.ok) break;
      sustained = rate;
      atSustained = step;
    }

    // Seats with and without chat at half the sustained rate (at least 5 lines/s).
    const chatLoad = Math.max(5, Math.floor(sustained / 2));
    await seatsFor(voice, roomId, 1); // warm-up
    const seats = await interleave(
      ROUNDS,
      () => seatsFor(voice, roomId, SEAT_SECONDS),
      () => withChat(voice, roomId, chatLoad, () => seatsFor(voice, roomId, SEAT_SECONDS)),
      (r, quiet, loaded) =>
        console.log(
          `${label} seats round ${r}: p99 ${quiet.p99Ms.toFixed(1)} ms quiet, ${loaded.p99Ms.toFixed(1)} ms with chat at ${chatLoad}/s (errors ${quiet.errors + loaded.errors})`,
        ),
    );
    const seatRatios = seats.a.map((quiet, i) => quiet.p99Ms / seats.b[i]!.p99Ms);
    const seatRatio = median(seatRatios);
    console.log(
      `${label}: chat sustained ${sustained} lines/s to ${FOLLOWERS} followers (p99 ${atSustained?.p99Ms.toFixed(1) ?? '-'} ms); seat p99 quiet/with chat at ${chatLoad}/s ${seatRatio.toFixed(3)} [${seatRatios.map((x) => x.toFixed(2)).join(' ')}], medians ${median(seats.a.map((r) => r.p99Ms)).toFixed(1)} / ${median(seats.b.map((r) => r.p99Ms)).toFixed(1)} ms`,
    );
    return { sustained, seatRatio };
  } finally {
    clients.send({ type: 'exit' });
  }
}

/** Gifts on a node keeping the rankings against one that does not, interleaved. */
async function giftComparison(label: string, on: RoomsNode, off: RoomsNode) {
  const [roomOn, roomOff] = [await giftRoom(on), await giftRoom(off)];
  await gifts(on, roomOn)();
  await gifts(off, roomOff)();
  const runs = await interleave(ROUNDS, gifts(off, roomOff), gifts(on, roomOn));
  const giftsOn = median(runs.b.map((r) => r.perSecond));
  const giftsOff = median(runs.a.map((r) => r.perSecond));
  console.log(
    `${label}: gifts ${giftsOn.toFixed(0)}/s with rankings, ${giftsOff.toFixed(0)}/s without, ratio ${describeRatios(runs)}`,
  );
  return runs.ratio;
}

async function benchBackend(label: string, cluster: boolean) {
  const on = await openBenchNode(cluster, ENV);
  const off = await openBenchNode(cluster, { ...ENV, ROOMS_VOICE_RANKINGS: 'false' });
  try {
    const chat = GIFTS_ONLY ? { sustained: NaN, seatRatio: NaN } : await chatAndSeats(label, on);
    return { ...chat, giftRatio: await giftComparison(label, on.node, off.node) };
  } finally {
    await on.close();
    await off.close();
  }
}

const embedded = await benchBackend('embedded', false);
const skip = await clusterSkipReason().catch((e: unknown) => String(e));
const cluster = skip ? null : await benchBackend('cluster', true);
if (skip) console.log(`cluster backend skipped: ${skip}`);
if (cluster) {
  console.log(`voice_cluster_chat_lines_per_s=${cluster.sustained}`);
  console.log(`voice_cluster_seat_p99_ratio_under_chat=${cluster.seatRatio.toFixed(3)}`);
  console.log(`voice_cluster_gift_ratio_rankings=${cluster.giftRatio.toFixed(3)}`);
}
console.log(`voice_chat_lines_per_s=${embedded.sustained}`);
console.log(`voice_seat_p99_ratio_under_chat=${embedded.seatRatio.toFixed(3)}`);
console.log(`voice_gift_ratio_rankings=${embedded.giftRatio.toFixed(3)}`);
process.exit(0);
