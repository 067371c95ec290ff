/**
 * `npm run bench:big-room`: one voice room's audience spread over a media server's workers
 * (src/media-server/room-routers.ts: origin and edge routers, producers piped). In-process
 * media server, free ports, plain RTP from and to Node (as `bench:voice-media`).
 *
 * 1. Listeners held at ≤ 1 % loss by one room with 8 seats talking (50 packets/s each):
 *    on 1 worker (router budget BENCH_ROUTER_CONSUMERS, default the server's 4,000), and on
 *    2 workers of one server with a budget of half the 1-worker figure, so that the origin
 *    fills on one worker and edge routers take the rest, alternating workers. Listeners join through the server's own placement (`onRouterFor`), in
 *    steps of BENCH_LISTENER_STEP (50), BENCH_STEP_SECONDS (3) each; loss counts packets
 *    that never came or came more than 200 ms late.
 * 2. A realistic talk pattern on 1 worker: 2 of the 8 seats talking, the 6 others silent
 *    with Opus DTX (5 packets/s, what `bench:dtx` measured for a silent Chromium seat).
 *    `big_room_dtx_gain` is its listener count over the all-talking one.
 * 3. The cost of a piped listener: 2 workers, the origin's budget forced to half the
 *    listeners, so that as many listen on the origin's worker as on the edge's; each
 *    worker's CPU per consumer over BENCH_ROUNDS (5) measured windows.
 *    `big_room_piped_cost_ratio` = median of (origin worker's CPU per consumer / edge
 *    worker's): 1 means a piped listener costs what a local one does.
 * 4. The pipe hop: one listener on the origin and one on an edge (other worker) consume
 *    the same seat; per RTP packet, arrival at the edge listener minus arrival at the
 *    origin listener, on an otherwise idle server: p50 and p99.
 *
 *    And on 2 media servers of one worker each (both in this process, registered in Redis
 *    under a fresh key prefix), with the same budget: listeners join over the room's
 *    server's internal HTTP API by room code, as a node would, so past the budget they are
 *    placed on an edge the room's server opens on the other server, the seats piped there
 *    over UDP with SRTP (src/media-server/remote-edges.ts).
 *
 * This machine has 2 cores, shared by the workers, the Node sender and the receiving
 * threads: past one worker's worth of listeners, the figure is the machine's limit, not
 * the second worker's or server's. Each step prints each worker's CPU: compare per-worker
 * costs.
 *
 * 5. The audience tier (./big-room-audience.ts): 10,000 listeners joining one room at 500/s
 *    and heartbeating, on one node: frames per join, the seat commands' p99 against 100
 *    present, the heap.
 *
 * Last lines machine-readable: `big_room_listeners_1w=`, `big_room_listeners_2w=`,
 * `big_room_listeners_2s=`,
 * `big_room_dtx_gain=`, `big_room_piped_cost_ratio=`, `big_room_pipe_hop_p50_ms=`,
 * `big_room_pipe_hop_p99_ms=`, `big_room_audience_seat_p99_ratio=`,
 * `big_room_audience_frames_per_join=` (per follower, with the crowd),
 * `big_room_announced_frames_per_join=` (every join announced).
 */
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { types } from 'mediasoup';
import pino from 'pino';
import { DEFAULT_ROUTER_CONSUMERS, mediaServerTestOptions } from '../src/media-server/options.js';
import type { MediaRegistrationSettings } from '../src/media-server/registration.js';
import { startMediaServer, type MediaServer } from '../src/media-server/server.js';
import {
  HttpPlainListener,
  opusLevelRtpParameters,
} from '../src/media-server/testing/plain-rtp.js';
import { deleteKeysWithPrefix, testKeyPrefix, testRedisUrl } from '../src/testing/backends.js';
import { audienceTier } from './big-room-audience.js';
import { linePlot } from './scale/plot.js';
import { median, quantile } from './load.js';
import {
  describeStep,
  measureStep,
  Receivers,
  rtpStream,
  sendPaced,
  type RtpStream,
} from './rtp.js';

const STEP = Number(process.env.BENCH_LISTENER_STEP ?? 50);
const MAX_LISTENERS = Number(process.env.BENCH_MAX_LISTENERS ?? 4000);
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BUDGET = Number(process.env.BENCH_ROUTER_CONSUMERS ?? DEFAULT_ROUTER_CONSUMERS);
const LATE_MS = 200;
const MAX_LOSS = 0.01;
const SEATS = 8;
const TALKING_RATE = 50;
const DTX_RATE = 5;
const PAYLOADS = [100, 115, 130, 145, 160].map((n) => randomBytes(n));
const ROOM = 'voice_room:default:big-room';
const logger = pino({ level: 'silent' });

interface Room {
  /** The room's server, and (on 2 servers) the other one. */
  readonly server: MediaServer;
  readonly other: MediaServer | null;
  readonly streams: RtpStream[];
  readonly producers: string[];
  close(): Promise<void>;
}

/** The room on one server of `workers` workers, or on `servers` servers of 1 worker each. */
async function openRoom(workers: number, budget: number, servers = 1): Promise<Room> {
  const internalToken = randomBytes(16).toString('hex');
  const options = {
    internalToken,
    workers,
    workerLogLevel: 'none' as const,
    routerConsumers: budget,
  };
  const redisUrl = testRedisUrl();
  const keyPrefix = testKeyPrefix();
  const registration = (id: string): MediaRegistrationSettings | null =>
    servers > 1 ? { id, redisUrl, keyPrefix, advertiseUrl: null, ttlMs: 3_000 } : null;
  const other =
    servers > 1
      ? await startMediaServer(
          mediaServerTestOptions({ ...options, rtcMinPort: 30000, rtcMaxPort: 34999 }),
          logger,
          process.env,
          registration('bench-edge'),
        )
      : null;
  const server = await startMediaServer(
    mediaServerTestOptions(options),
    logger,
    process.env,
    registration('bench-origin'),
  );
  const close = async () => {
    await server.close();
    await other?.close();
    if (other) await deleteKeysWithPrefix(redisUrl, keyPrefix).catch(() => 0);
  };
  const { registry } = server;
  const { entry: origin } = await registry.ensureRouter(ROOM);
  const codec = opusLevelRtpParameters(0);
  const streams: RtpStream[] = [];
  const producers: string[] = [];
  for (let seat = 0; seat < SEATS; seat++) {
    const ssrc = 1000 + seat;
    const { transport } = await registry.createPlainTransport(origin, `seat-${seat}`);
    const { producer } = await registry.createProducer(
      transport.id,
      'audio',
      opusLevelRtpParameters(ssrc) as never,
      false,
    );
    producers.push(producer.id);
    streams.push(rtpStream(transport.tuple.localPort, ssrc, codec.codecs[0]!.payloadType, 1));
  }
  return { server, other, streams, producers, close };
}

/** Adds a listener through the server's placement, consuming every seat, sending to `port`. */
async function addListener(room: Room, index: number, port: number): Promise<string> {
  const { registry } = room.server;
  if (room.other) return addListenerOverHttp(room, index, port);
  const { transport, routerEntry: router } = await registry.onRouterFor(ROOM, 'recv', (at) =>
    registry.createPlainTransport(at, `listener-${index}`, 'recv'),
  );
  await transport.connect({ ip: '127.0.0.1', port });
  const caps = registry.routerOfRoom(ROOM).router.rtpCapabilities;
  for (const producerId of room.producers) {
    const { consumer } = await registry.createConsumer(transport.id, producerId, caps);
    await consumer.resume();
  }
  return router.router.id;
}

/** Feeds the seats: `talking` of them at 50 packets/s, the rest at the DTX rate. */
function feeder(room: Room, talking: number) {
  const sender = dgram.createSocket('udp4');
  const loud = room.streams.slice(0, talking);
  const quiet = room.streams.slice(talking);
  const payload = (n: number) => PAYLOADS[n % PAYLOADS.length]!;
  const feed = async (seconds: number) => {
    const [a, b] = await Promise.all([
      sendPaced(sender, loud, seconds, TALKING_RATE, payload),
      quiet.length ? sendPaced(sender, quiet, seconds, DTX_RATE, payload) : Promise.resolve(0),
    ]);
    return a * loud.length + b * quiet.length;
  };
  return { feed, close: () => sender.close() };
}

/** As a node would: over the room's server's internal API, so it may land on the other. */
async function addListenerOverHttp(room: Room, index: number, port: number): Promise<string> {
  const { server } = room;
  const listener = await HttpPlainListener.join(
    server,
    server.internalToken,
    ROOM,
    `listener-${index}`,
    port,
  );
  const caps = server.registry.routerOfRoom(ROOM).router.rtpCapabilities;
  for (const producerId of room.producers) await listener.consume(producerId, caps);
  return listener.routerId;
}

const workersOf = (room: Room) =>
  [room.server, ...(room.other ? [room.other] : [])].flatMap((server) =>
    server.pool.slots.map((s) => s.worker),
  );

async function cpuMs(worker: types.Worker): Promise<number> {
  const usage = await worker.getResourceUsage();
  return usage.ru_utime + usage.ru_stime;
}

/** Listeners held at ≤ 1 % loss; prints every step with each worker's CPU. */
async function capacity(
  label: string,
  workers: number,
  talking: number,
  step = STEP,
  budget = BUDGET,
  servers = 1,
) {
  const room = await openRoom(workers, budget, servers);
  const receivers = new Receivers(LATE_MS);
  const { feed, close } = feeder(room, talking);
  console.log(
    `${label}: 1 room, ${SEATS} seats (${talking} talking at ${TALKING_RATE} packets/s, ` +
      `${SEATS - talking} silent with DTX at ${DTX_RATE}/s), ${servers} server(s) of ` +
      `${workers} worker(s), ` +
      `router budget ${budget} consumers, steps of ${step}, ${STEP_SECONDS} s each`,
  );
  try {
    await receivers.open();
    let best = 0;
    let listeners = 0;
    while (listeners < MAX_LISTENERS) {
      for (const target = listeners + step; listeners < target; listeners++) {
        await addListener(room, listeners, receivers.port(listeners));
      }
      const before = await Promise.all(workersOf(room).map(cpuMs));
      const started = Date.now();
      const result = await measureStep({
        receivers,
        worker: workersOf(room)[0]!,
        seconds: STEP_SECONDS,
        copies: listeners,
        send: feed,
      });
      const after = await Promise.all(workersOf(room).map(cpuMs));
      const perWorker = after.map(
        (ms, i) => `${(((ms - before[i]!) / (Date.now() - started)) * 100).toFixed(0)}%`,
      );
      const routers = room.server.registry.routersOfRoom(ROOM);
      console.log(
        `  ${String(listeners).padStart(5)} listeners on ${routers.length} router(s): ` +
          `${describeStep(result)}; CPU per worker ${perWorker.join(' / ')}`,
      );
      if (result.loss > MAX_LOSS) break;
      best = listeners;
    }
    return best;
  } finally {
    close();
    await receivers.close();
    await room.close();
  }
}

/** Median over rounds of (origin worker's CPU per consumer) / (edge worker's). */
async function pipedCost(listenersPerWorker: number): Promise<number> {
  const room = await openRoom(2, listenersPerWorker * SEATS);
  const receivers = new Receivers(LATE_MS);
  const { feed, close } = feeder(room, SEATS);
  try {
    await receivers.open();
    for (let i = 0; i < 2 * listenersPerWorker; i++) {
      await addListener(room, i, receivers.port(i));
    }
    const [origin, edge] = room.server.registry.localRoutersOfRoom(ROOM);
    if (!origin || !edge || origin.slot === edge.slot) throw new Error('expected 2 workers');
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const before = [await cpuMs(origin.worker), await cpuMs(edge.worker)];
      await feed(STEP_SECONDS);
      const after = [await cpuMs(origin.worker), await cpuMs(edge.worker)];
      const perConsumer = (i: number, entry: typeof origin) =>
        (after[i]! - before[i]!) / (entry.load || 1);
      ratios.push(perConsumer(0, origin) / perConsumer(1, edge));
    }
    console.log(
      `piped listener cost: ${listenersPerWorker} listeners on the origin's worker and ` +
        `${listenersPerWorker} on an edge's, all ${SEATS} seats talking; origin/edge CPU per ` +
        `consumer per round: ${ratios.map((r) => r.toFixed(2)).join(', ')} ` +
        `(the origin's worker also receives the seats and feeds the pipe)`,
    );
    return median(ratios);
  } finally {
    close();
    await receivers.close();
    await room.close();
  }
}

/**
 * The send time the sender stamped in an RTP packet's payload (bench/rtp.ts): the same in
 * every listener's copy, whatever SSRC and sequence numbers the consumers rewrote. Null for
 * RTCP.
 */
function sendStampOf(msg: Buffer): number | null {
  const pt = (msg[1] ?? 0) & 0x7f;
  if (pt >= 72 && pt <= 79) return null;
  let offset = 12 + 4 * ((msg[0] ?? 0) & 0x0f);
  if ((msg[0] ?? 0) & 0x10) offset += 4 + 4 * msg.readUInt16BE(offset + 2);
  return offset + 8 <= msg.length ? msg.readDoubleBE(offset) : null;
}

/** Arrival at an edge listener minus arrival at an origin listener, per packet (ms). */
async function pipeHop(): Promise<number[]> {
  const room = await openRoom(2, 1);
  const arrivals = [new Map<number, number>(), new Map<number, number>()];
  // Keyed by send stamp: each listener receives its own copy of each packet.
  const sockets = arrivals.map((seen) => {
    const socket = dgram.createSocket('udp4');
    socket.on('message', (msg) => {
      const stamp = sendStampOf(msg);
      if (stamp !== null) seen.set(stamp, performance.now());
    });
    return socket;
  });
  const { feed, close } = feeder({ ...room, streams: room.streams.slice(0, 1) }, 1);
  try {
    for (const [i, socket] of sockets.entries()) {
      await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
      const router = await addListener(
        { ...room, producers: room.producers.slice(0, 1) },
        i,
        socket.address().port,
      );
      const role = room.server.registry.router(router).role;
      if (role !== (i === 0 ? 'origin' : 'edge')) throw new Error(`listener ${i} on ${role}`);
    }
    await feed(1);
    arrivals.forEach((m) => m.clear());
    await feed(10);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const hops: number[] = [];
    for (const [stamp, atOrigin] of arrivals[0]!) {
      const atEdge = arrivals[1]!.get(stamp);
      if (atEdge !== undefined) hops.push(atEdge - atOrigin);
    }
    return hops.sort((a, b) => a - b);
  } finally {
    close();
    for (const s of sockets) s.close();
    await room.close();
  }
}

/** bench/plots/bench-big-room-listeners.svg: listeners held against the workers carrying the room. */
async function plotListeners(oneWorker: number, twoWorkers: number, twoServers: number) {
  const svg = linePlot({
    title: 'One room, 8 seats talking: listeners held at ≤ 1 % loss',
    xLabel: 'mediasoup workers carrying the room (this machine: 2 cores in all)',
    yLabel: 'listeners',
    series: [
      { label: 'linear from 1 worker', points: [1, 2].map((x) => ({ x, y: x * oneWorker })) },
      {
        label: '1 server',
        points: [
          { x: 1, y: oneWorker },
          { x: 2, y: twoWorkers },
        ],
      },
      {
        label: '2 servers of 1 worker',
        points: [
          { x: 1, y: oneWorker },
          { x: 2, y: twoServers },
        ],
      },
    ],
  });
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'plots');
  await writeFile(path.join(dir, 'bench-big-room-listeners.svg'), svg);
}

async function main(): Promise<void> {
  const oneWorker = await capacity('all talking, 1 worker', 1, SEATS);
  // A budget of half what one worker held: the audience spreads over both workers from
  // there on (the default budget is above what this machine's load generator can feed).
  const twoWorkers = await capacity(
    'all talking, 2 workers',
    2,
    SEATS,
    STEP,
    Math.max(STEP, Math.floor(oneWorker / 2)) * SEATS,
  );
  const twoServers = await capacity(
    'all talking, 2 servers',
    1,
    SEATS,
    STEP,
    Math.max(STEP, Math.floor(oneWorker / 2)) * SEATS,
    2,
  );
  const dtx = await capacity('2 of 8 talking, 1 worker', 1, 2, STEP * 2);
  const pipedRatio = await pipedCost(Math.max(STEP, Math.floor(oneWorker / 3)));
  const hops = await pipeHop();
  const fmt = (n: number) => n.toFixed(2);
  console.log(
    `pipe hop (edge listener − origin listener arrival, ${hops.length} packets, idle server): ` +
      `p50 ${fmt(quantile(hops, 0.5))} ms, p99 ${fmt(quantile(hops, 0.99))} ms`,
  );
  console.log(
    `listeners held at ≤1% loss: 1 worker ${oneWorker}, 2 workers ${twoWorkers} ` +
      `(${fmt(twoWorkers / Math.max(1, oneWorker))}×), 2 servers ${twoServers} ` +
      `(${fmt(twoServers / Math.max(1, oneWorker))}×); 2 of 8 talking ${dtx} ` +
      `(${fmt(dtx / Math.max(1, oneWorker))}× all talking)`,
  );
  await plotListeners(oneWorker, twoWorkers, twoServers);
  const audience = await audienceTier();
  const seatRatio = audience.seatP99Large / audience.seatP99Small;
  console.log(`big_room_listeners_1w=${oneWorker}`);
  console.log(`big_room_listeners_2w=${twoWorkers}`);
  console.log(`big_room_listeners_2s=${twoServers}`);
  console.log(`big_room_dtx_gain=${fmt(dtx / Math.max(1, oneWorker))}`);
  console.log(`big_room_piped_cost_ratio=${fmt(pipedRatio)}`);
  console.log(`big_room_pipe_hop_p50_ms=${fmt(quantile(hops, 0.5))}`);
  console.log(`big_room_pipe_hop_p99_ms=${fmt(quantile(hops, 0.99))}`);
  console.log(`big_room_audience_seat_p99_ratio=${fmt(seatRatio)}`);
  console.log(`big_room_audience_frames_per_join=${audience.framesPerJoinCrowd.toFixed(4)}`);
  console.log(`big_room_announced_frames_per_join=${audience.framesPerJoinAnnounced.toFixed(4)}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
