/**
 * `npm run bench:voice-media`: a voice room's audio through the built-in media server, on
 * one real node (embedded SQLite, the embedded media server with ONE worker, free ports).
 *
 * 1. Listeners per worker. One voice room with 8 seats publishing: 8 users MicUp, each
 *    seat's producer sits on a plain-RTP transport of the room's router with the app data
 *    the voice rules give (`room_kind`, `user_id`, the seat's `mic_session_id`), and Node
 *    feeds it Opus-like RTP (50 packets/s of 100-160 bytes, with the audio-level
 *    extension); the seats turn `publishing` from that RTP. Listeners are plain-RTP
 *    transports on the same router, each consuming all 8 seats and sending back to Node's
 *    receiving threads (bench/rtp.ts, shared with `bench:media`). Listeners are added in
 *    steps of BENCH_LISTENER_STEP (50), BENCH_STEP_SECONDS (3) each; the answer is the
 *    largest count whose loss stayed at or below 1%, where a packet is lost if it never
 *    came or came more than BENCH_LATE_MS (200) after it was sent: a worker past its limit
 *    queues rather than drops, and audio seconds late is no audio. Node sends and counts
 *    every packet on the same cores as the worker: with the worker well below a core and
 *    receiver drops, the figure is Node's limit, a lower bound on the worker's. Plain RTP
 *    has no SRTP: browsers' WebRTC transports cost the worker more per packet.
 * 2. MicUp → `voice.mic.publishing` at another member's `/ws`, over BENCH_ROUNDS rounds of
 *    each path, interleaved (the order alternates):
 *    - media path: REST MicUp; over the speaker's `/ws`, `voice.transport.create` (send),
 *      `voice.transport.connect` and `voice.produce.start` (the voice rules check the seat
 *      and stamp the producer); then, as no browser does DTLS and RTP here, a stand-in for
 *      the browser's media: REST GET room for the seat's `mic_session_id`, a plain-RTP
 *      transport and producer created directly on the media server's registry with the
 *      same app data, and RTP every 20 ms until the frame arrives. The seat turns
 *      `publishing` from the media server's `producer_rtp_started` (no client confirm);
 *    - baseline: REST MicUp, REST GET room, REST `mic/confirm` (ConfirmMicPublishing).
 *    Each is timed from the MicUp request's start to the frame's arrival; MicDown ends the
 *    round. The ratio of the medians says what the media path costs next to a client
 *    confirm. With 30 rounds, p99 is the slowest round.
 *
 * Quote ratios and medians: machines are shared and noisy. Last lines machine-readable:
 * `voice_listeners_per_worker=`, `mic_up_to_publishing_p50_ms=`,
 * `mic_up_to_publishing_p99_ms=`, `mic_up_confirm_baseline_p50_ms=`.
 */
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import type { types } from 'mediasoup';
import type { TestClient } from '../src/edge/ws/testing/ws-client.js';
import type { VoiceProducerAppData } from '../src/voice-room/api/media-events.js';
import { startMeetingNode, type MeetingNode } from '../src/main/testing/meeting-node.js';
import type { MediaServer } from '../src/media-server/server.js';
import { CLIENT_DTLS, opusRtpParameters } from '../src/media-server/testing/harness.js';
import {
  opusLevelRtpParameters,
  plainSendTransport,
  RtpSender,
} from '../src/media-server/testing/plain-rtp.js';
import { mediaRoomOf } from '../src/media-cluster/media-servers.js';
import { median, quantile } from './load.js';
import { describeStep, measureStep, Receivers, rtpStream, sendPaced } from './rtp.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const STEP = Number(process.env.BENCH_LISTENER_STEP ?? 50);
const MAX_LISTENERS = Number(process.env.BENCH_MAX_LISTENERS ?? 1000);
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? 3);
/** Audio later than a listener's jitter buffer holds is as good as lost. */
const LATE_MS = Number(process.env.BENCH_LATE_MS ?? 200);
const SEATS = 8;
const PACKETS_PER_SECOND = 50;
/** Opus at speech bitrates: payloads of 100-160 bytes, in turn. */
const PAYLOADS = [100, 115, 130, 145, 160].map((n) => randomBytes(n));
const MAX_LOSS = 0.01;
const FRAME_TIMEOUT_MS = 10_000;

const SPEAKER = 'speaker';
const LISTENER = 'listener';
const HOLDERS = Array.from({ length: SEATS }, (_, i) => `seat${i}`);

type Json = Record<string, unknown>;

interface Bench {
  readonly started: MeetingNode;
  readonly server: MediaServer;
  rest(method: 'GET' | 'POST', path: string, who: string, body?: Json): Promise<Json>;
}

function bench(started: MeetingNode): Bench {
  const server = started.node.media.server;
  if (!server) throw new Error('the embedded media server did not start (worker binary?)');
  const base = `${started.node.httpAddress}/api/v1`;
  return {
    started,
    server,
    async rest(method, path, who, body) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${started.api.tokens[who]}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const json = (await res.json()) as { code: number; message: string; data: Json };
      if (json.code !== 0) throw new Error(`${method} ${path}: ${json.code} ${json.message}`);
      return json.data;
    },
  };
}

function acked(frame: { event: string; code: number; message?: string; data: Json }): Json {
  if (frame.code !== 0) throw new Error(`${frame.event}: ${frame.message}`);
  return frame.data;
}

interface Seat {
  readonly seat_index: number;
  readonly state: string;
  /** The holder's account id: a number in JSON (decimal text in the producer's app data). */
  readonly user_id: number | null;
  readonly mic_session_id: string | null;
}

async function seatsOf(b: Bench, roomId: string): Promise<Seat[]> {
  return (await b.rest('GET', `/voice/rooms/${roomId}`, LISTENER)).seats as Seat[];
}

async function newRoom(b: Bench, owner: string, members: readonly string[]): Promise<string> {
  const roomId = (await b.rest('POST', '/voice/rooms', owner, { title: 'bench' })).room_id;
  if (typeof roomId !== 'string') throw new Error('no room id');
  for (const who of members) await b.rest('POST', `/voice/rooms/${roomId}/join`, who);
  return roomId;
}

const mediaRoom = (roomId: string) => mediaRoomOf({ appCode: 'default', roomId }, 'voice_room');

/** The seat's producer fed from Node: a plain transport on the registry, the voice app data. */
async function plainSeatProducer(b: Bench, roomId: string, userId: string, session: string) {
  const plain = await plainSendTransport(b.server, mediaRoom(roomId), null);
  const ssrc = 1 + Math.floor(Math.random() * 0xfffffff0);
  const appData: VoiceProducerAppData = {
    room_kind: 'voice_room',
    user_id: userId,
    mic_session_id: session,
  };
  const { producer } = await b.server.registry.createProducer(
    plain.id,
    'audio',
    // A shape-checked JSON body over the HTTP API; typed here as mediasoup's.
    opusLevelRtpParameters(ssrc) as types.RtpParameters,
    false,
    appData,
  );
  return { transportId: plain.id, port: plain.port, ssrc, producerId: producer.id };
}

/** When each `voice.mic.publishing` of `userId` reached `socket`, by mic session. */
function publishingFrames(socket: TestClient, userId: number) {
  const seen = new Map<string, { at: number; source: unknown }>();
  const waiting = new Map<string, () => void>();
  socket.ws.on('message', (raw: Buffer) => {
    const at = performance.now();
    const frame = JSON.parse(raw.toString('utf8')) as { event: string; data?: Json };
    if (frame.event !== 'voice.mic.publishing' || frame.data?.user_id !== userId) return;
    const session = String(frame.data.mic_session_id);
    seen.set(session, { at, source: frame.data.source });
    waiting.get(session)?.();
  });
  return async (session: string, source: 'rtc' | 'client'): Promise<number> => {
    if (!seen.has(session)) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no publishing frame`)), FRAME_TIMEOUT_MS);
        waiting.set(session, () => {
          clearTimeout(timer);
          resolve();
        });
      });
      waiting.delete(session);
    }
    const frame = seen.get(session)!;
    if (frame.source !== source) throw new Error(`publishing from ${String(frame.source)}`);
    return frame.at;
  };
}

async function micLatency(b: Bench) {
  const roomId = await newRoom(b, SPEAKER, [SPEAKER, LISTENER]);
  const speakerId = b.started.api.ids[SPEAKER]!;
  const listener = await b.started.socket(LISTENER);
  acked(await listener.request('room.subscribe', { room_id: roomId }));
  const publishedAt = publishingFrames(listener, speakerId);
  const speaker = await b.started.socket(SPEAKER);
  acked(await speaker.request('room.subscribe', { room_id: roomId }));
  acked(await speaker.request('voice.media.join', { room_id: roomId }));
  const micUp = () => b.rest('POST', `/voice/rooms/${roomId}/mic/up`, SPEAKER, { seat_index: 0 });
  const session = async () => (await seatsOf(b, roomId))[0]!.mic_session_id!;
  const micDown = () => b.rest('POST', `/voice/rooms/${roomId}/mic/down`, SPEAKER);

  const baselineRound = async () => {
    const t0 = performance.now();
    await micUp();
    const id = await session();
    await b.rest('POST', `/voice/rooms/${roomId}/mic/confirm`, SPEAKER, { mic_session_id: id });
    const ms = (await publishedAt(id, 'client')) - t0;
    await micDown();
    return ms;
  };

  const mediaRound = async () => {
    const t0 = performance.now();
    await micUp();
    const room = { room_id: roomId };
    const send = acked(
      await speaker.request('voice.transport.create', { ...room, direction: 'send' }),
    ).id as string;
    acked(
      await speaker.request('voice.transport.connect', {
        ...room,
        transport_id: send,
        dtls_parameters: CLIENT_DTLS,
      }),
    );
    acked(
      await speaker.request('voice.produce.start', {
        ...room,
        transport_id: send,
        kind: 'audio',
        rtp_parameters: opusRtpParameters(1 + Math.floor(Math.random() * 1e9)),
      }),
    );
    // The stand-in for the browser's DTLS and RTP on `send`.
    const id = await session();
    const seat = await plainSeatProducer(b, roomId, String(speakerId), id);
    const sender = new RtpSender(seat.port, seat.ssrc);
    let arrived = false;
    const feeding = (async () => {
      while (!arrived) await sender.send(1);
    })();
    const ms = await publishedAt(id, 'rtc').then(
      (at) => at - t0,
      (error: unknown) => {
        arrived = true;
        throw error;
      },
    );
    arrived = true;
    await feeding;
    sender.close();
    // MicDown closes both producers (the check after its commit); the transports go here.
    // The send transport's close names no session: it cannot end a later one.
    await micDown();
    b.server.registry.closeTransport(seat.transportId);
    b.server.registry.closeTransport(send);
    return ms;
  };

  // One of each unmeasured: the first calls pay for compilation and connection setup.
  await baselineRound();
  await mediaRound();
  const media: number[] = [];
  const baseline: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      media.push(await mediaRound());
      baseline.push(await baselineRound());
    } else {
      baseline.push(await baselineRound());
      media.push(await mediaRound());
    }
  }
  media.sort((x, y) => x - y);
  baseline.sort((x, y) => x - y);
  return { media, baseline };
}

async function listenersPerWorker(b: Bench): Promise<number> {
  const roomId = await newRoom(b, HOLDERS[0]!, HOLDERS);
  for (const [i, who] of HOLDERS.entries()) {
    await b.rest('POST', `/voice/rooms/${roomId}/mic/up`, who, { seat_index: i });
  }
  const sessions = await seatsOf(b, roomId);
  // What a member's `voice.media.join` does first: the room's router.
  await b.server.registry.ensureRouter(mediaRoom(roomId));
  const codec = opusLevelRtpParameters(0);
  const seats = [];
  for (const seat of sessions.slice(0, SEATS)) {
    seats.push(await plainSeatProducer(b, roomId, String(seat.user_id!), seat.mic_session_id!));
  }
  const streams = seats.map((s) =>
    rtpStream(s.port, s.ssrc, codec.codecs[0]!.payloadType, codec.headerExtensions[0]!.id),
  );
  const sender = dgram.createSocket('udp4');
  const receivers = new Receivers(LATE_MS);
  try {
    await receivers.open();
    const feed = async (seconds: number) =>
      SEATS *
      (await sendPaced(sender, streams, seconds, PACKETS_PER_SECOND, (n) => {
        return PAYLOADS[n % PAYLOADS.length]!;
      }));
    await feed(0.5);
    for (let i = 0; ; i++) {
      const states = (await seatsOf(b, roomId)).slice(0, SEATS).map((s) => s.state);
      if (states.every((s) => s === 'publishing')) break;
      if (i === 50) throw new Error(`seats not publishing: ${states.join(', ')}`);
      await feed(0.1);
    }
    const { router, worker } = b.server.registry.routerOfRoom(mediaRoom(roomId));
    const wire = PAYLOADS.reduce((sum, p) => sum + p.length, 0) / PAYLOADS.length + 12 + 8 + 28;
    const kbps = (SEATS * PACKETS_PER_SECOND * wire * 8) / 1000;
    console.log(
      `listeners: 1 voice room, ${SEATS} seats publishing (plain RTP, ${PACKETS_PER_SECOND} ` +
        `packets/s of 100-160 B each), every listener consumes all ${SEATS} ` +
        `(≈${kbps.toFixed(0)} kbit/s per listener), 1 worker, steps of ${STEP}, ` +
        `${STEP_SECONDS} s each, loss limit ${MAX_LOSS * 100}%`,
    );
    const listenInfo = { protocol: 'udp', ip: '127.0.0.1' } as const;
    let best = 0;
    let listeners = 0;
    while (listeners < MAX_LISTENERS) {
      for (const target = listeners + STEP; listeners < target; listeners++) {
        const out = await router.createPlainTransport({
          listenInfo,
          rtcpMux: true,
          comedia: false,
        });
        await out.connect({ ip: '127.0.0.1', port: receivers.port(listeners) });
        for (const seat of seats) {
          await out.consume({
            producerId: seat.producerId,
            rtpCapabilities: router.rtpCapabilities,
          });
        }
      }
      const step = await measureStep({
        receivers,
        worker,
        seconds: STEP_SECONDS,
        copies: listeners,
        send: feed,
      });
      console.log(
        `  ${String(listeners).padStart(5)} listeners (${listeners * SEATS} consumers): ` +
          `${describeStep(step)}, ${((listeners * kbps) / 1000).toFixed(1)} Mbit/s out`,
      );
      if (step.loss > MAX_LOSS) break;
      best = listeners;
    }
    return best;
  } finally {
    sender.close();
    await receivers.close();
  }
}

async function main(): Promise<void> {
  const started = await startMeetingNode([SPEAKER, LISTENER, ...HOLDERS], {
    // The bench runs longer than a minute without heartbeats, and signals faster than a person.
    ROOMS_PRESENCE_TIMEOUT_MS: '3600000',
    ROOMS_ROOM_CREATE_LIMIT: '0',
    ROOMS_MAX_OPEN_ROOMS_PER_OWNER: '0',
    ROOMS_WS_MAX_FRAMES_PER_S: '100000',
    ROOMS_WS_FRAME_BURST: '100000',
  });
  try {
    const b = bench(started);
    const { media, baseline } = await micLatency(b);
    const fmt = (ms: number) => ms.toFixed(1);
    const p50 = quantile(media, 0.5);
    const p99 = quantile(media, 0.99);
    const base50 = quantile(baseline, 0.5);
    console.log(
      `MicUp → voice.mic.publishing at a member, ${ROUNDS} rounds each, interleaved: ` +
        `media path p50 ${fmt(p50)} ms p99 ${fmt(p99)} ms (min ${fmt(media[0]!)}); ` +
        `client confirm p50 ${fmt(base50)} ms p99 ${fmt(quantile(baseline, 0.99))} ms ` +
        `(min ${fmt(baseline[0]!)}); ratio of medians ${(median(media) / median(baseline)).toFixed(2)}`,
    );
    const perWorker = await listenersPerWorker(b);
    const capped =
      perWorker >= MAX_LISTENERS ? ` (stopped at BENCH_MAX_LISTENERS=${MAX_LISTENERS})` : '';
    console.log(
      `listeners per worker before >1% loss: ${perWorker}${capped} ` +
        `(${perWorker * SEATS} consumers of ${SEATS} seats)`,
    );
    console.log(`voice_listeners_per_worker=${perWorker}`);
    console.log(`mic_up_to_publishing_p50_ms=${fmt(p50)}`);
    console.log(`mic_up_to_publishing_p99_ms=${fmt(p99)}`);
    console.log(`mic_up_confirm_baseline_p50_ms=${fmt(base50)}`);
  } finally {
    await started.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
