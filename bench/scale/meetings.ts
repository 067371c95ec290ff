/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument -- the API's JSON, read by a bench */
/**
 * Scale dimension `meetings`: N meetings × 8 members live at once on one node (a process of
 * its own, bench/scale/meeting-node.ts: embedded backend, the embedded media server with one
 * worker), driven from this process. Every member joins over REST,
 * follows over `/ws`, creates a send and a recv transport, produces audio and consumes the
 * other 7 members' audio; then every meeting chats. Measured: REST join p99, the ACK p99 of
 * `meeting.transport.create`, `meeting.produce.start` and `meeting.consume.start` (16
 * members' signalling in flight at once), chat send → all 8 members p99, and the node's
 * resident memory. First, uncounted, other members join about 1,000 times and run the whole
 * flow once (a fresh process optimises its hot paths then; the first 70 joins' p99 is
 * reported as `fresh_node_join_p99_ms`). Then BENCH_MEETING_ROUNDS measured rounds; each
 * figure is the median of the rounds' p99s. Goals: the signalling under 50 ms, chat under
 * 100 ms, at 100 meetings.
 */
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { opusRtpParameters } from '../../src/media-server/testing/harness.js';
import { api, users } from '../http-api.js';
import { median, quantile } from '../load.js';
import { startChild } from './child.js';
import type { ScaleDimension } from './dimension.js';

const MEMBERS = 8;
const IN_FLIGHT = 16;
const WARM_UP_MEETINGS = 10;
/** Rounds of WARM_UP_MEETINGS new meetings joined before the measured ones (1,050 joins). */
const WARM_UP_ROUNDS = 15;
const CHATS_PER_MEETING = Number(process.env.BENCH_MEETING_CHATS ?? 5);
/** Measured rounds per size; figures are the median of the rounds' p99s. */
const MEASURED_ROUNDS = Number(process.env.BENCH_MEETING_ROUNDS ?? 3);

type Frame = { event: string; seq?: number; code: number; message?: string; data: any };

/** A member's socket: requests answered by their ACK, other frames to `onFrame`. */
class MemberSocket {
  private seq = 0;
  private readonly acks = new Map<number, (frame: Frame) => void>();
  onFrame: (frame: Frame) => void = () => undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (raw: Buffer) => {
      const frame = JSON.parse(raw.toString('utf8')) as Frame;
      const ack = frame.seq === undefined ? undefined : this.acks.get(frame.seq);
      if (ack && frame.event.endsWith('.ack')) {
        this.acks.delete(frame.seq!);
        ack(frame);
      } else this.onFrame(frame);
    });
  }

  static async open(base: string, token: string): Promise<MemberSocket> {
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/ws?token=${token}`);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return new MemberSocket(ws);
  }

  /** The ACK's data and how long it took; a refusal throws. */
  async request(event: string, data: Record<string, unknown>): Promise<{ data: any; ms: number }> {
    const seq = ++this.seq;
    const started = performance.now();
    const ack = await new Promise<Frame>((resolve) => {
      this.acks.set(seq, resolve);
      this.ws.send(JSON.stringify({ event, seq, data }));
    });
    if (ack.code !== 0) throw new Error(`${event}: ${ack.message ?? ack.code}`);
    return { data: ack.data, ms: performance.now() - started };
  }

  close(): void {
    this.ws.close();
  }
}

/** Runs `jobs` with at most `limit` in flight. */
async function pool<T>(limit: number, jobs: readonly (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, jobs.length) }, async () => {
      while (next < jobs.length) {
        const i = next++;
        results[i] = await jobs[i]!();
      }
    }),
  );
  return results;
}

/**
 * Resolves once the process `pid` has used under a tenth of a core over two 250 ms windows
 * in a row (it has finished releasing the last round's meetings), or after 15 s. Reads
 * /proc; elsewhere it waits 2 s.
 */
async function quiet(pid: number): Promise<void> {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return sleep(2_000);
  const cpuMs = () => {
    const fields = readFileSync(stat, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, 100 Hz ticks
  };
  const until = performance.now() + 15_000;
  let calm = 0;
  let last = cpuMs();
  while (calm < 2 && performance.now() < until) {
    await sleep(250);
    const now = cpuMs();
    calm = now - last < 25 ? calm + 1 : 0;
    last = now;
  }
}

const p99 = (values: number[]) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.99,
  );

export const meetingsDimension: ScaleDimension = {
  name: 'meetings',
  what: `N meetings × ${MEMBERS} members on one node with one media server: signalling and chat p99`,
  unit: 'meetings',
  sizes: [10, 50, 100],
  plots: [
    {
      figure: 'consume_start_p99_ms',
      label: 'ACK p99 (ms)',
      with: [
        { figure: 'transport_create_p99_ms', label: 'transport.create' },
        { figure: 'produce_start_p99_ms', label: 'produce.start' },
        { figure: 'rest_join_p99_ms', label: 'REST join' },
      ],
    },
    { figure: 'chat_p99_ms', label: 'chat send → all members p99 (ms)' },
    { figure: 'rss_mib', label: 'node resident memory (MiB)' },
  ],
  async run(meetings) {
    // The node in a process of its own (its media worker in another): the clients here do
    // not share its event loop, and its resident memory is its own.
    const prof = process.env.BENCH_NODE_PROF;
    const { child: node, ready } = await startChild(
      'meeting-node.ts',
      {},
      prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [],
    );
    const base = ready.url as string;
    const sockets: MemberSocket[] = [];
    try {
      const http = api(base);
      type Room = { code: string; members: Awaited<ReturnType<typeof users>>; caps: unknown };
      type People = Awaited<ReturnType<typeof users>>;
      const register = (prefix: string, count: number) =>
        users(
          base,
          Array.from({ length: count * MEMBERS }, (_, i) => `${prefix}${i}`),
        );
      const open = async (prefix: string, people: People): Promise<Room[]> => {
        const made: Room[] = [];
        for (let m = 0; m * MEMBERS < people.length; m++) {
          const members = people.slice(m * MEMBERS, (m + 1) * MEMBERS);
          const created = await http.call('POST', '/meeting/rooms', members[0]!.token, {
            title: `${prefix} ${m}`,
          });
          made.push({ code: created.room.room_code, members, caps: created.rtp_capabilities });
        }
        return made;
      };
      const end = async (rooms: Room[]) => {
        for (const room of rooms) {
          await http.call('POST', `/meeting/rooms/${room.code}/end`, room.members[0]!.token, {});
        }
      };
      /**
       * The whole flow for `rooms`: every member but the host joins over REST, then all
       * follow over `/ws`, open their transports, produce and consume, and every meeting
       * chats; IN_FLIGHT members at a time. Answers each step's latencies.
       */
      const joinAll = async (rooms: Room[]) => {
        const joins: number[] = [];
        await pool(
          IN_FLIGHT,
          rooms.flatMap((room) =>
            room.members.slice(1).map((member) => async () => {
              const started = performance.now();
              const joined = await http.call(
                'POST',
                `/meeting/rooms/${room.code}/join`,
                member.token,
                {},
              );
              joins.push(performance.now() - started);
              room.caps ??= joined.rtp_capabilities;
            }),
          ),
        );
        return joins;
      };
      const exercise = async (rooms: Room[], label: string) => {
        const joins = await joinAll(rooms);
        // Every member follows its meeting; then the media signalling, 16 members at a time.
        const live = await pool(
          IN_FLIGHT,
          rooms.flatMap((room) =>
            room.members.map((member) => async () => {
              const socket = await MemberSocket.open(base, member.token);
              sockets.push(socket);
              await socket.request('meeting.room.join', { room_code: room.code });
              return { room, socket };
            }),
          ),
        );
        const create: number[] = [];
        const produce: number[] = [];
        const producers = new Map<string, { id: string; owner: MemberSocket }[]>();
        const recv = new Map<MemberSocket, string>();
        await pool(
          IN_FLIGHT,
          live.map(({ room, socket }) => async () => {
            const at = { room_code: room.code };
            const send = await socket.request('meeting.transport.create', {
              ...at,
              direction: 'send',
            });
            const receive = await socket.request('meeting.transport.create', {
              ...at,
              direction: 'recv',
            });
            create.push(send.ms, receive.ms);
            recv.set(socket, receive.data.id);
            const produced = await socket.request('meeting.produce.start', {
              ...at,
              transport_id: send.data.id,
              kind: 'audio',
              rtp_parameters: opusRtpParameters(1 + Math.floor(Math.random() * 2 ** 31)),
            });
            produce.push(produced.ms);
            const list = producers.get(room.code) ?? [];
            list.push({ id: produced.data.producer_id, owner: socket });
            producers.set(room.code, list);
          }),
        );
        const consume: number[] = [];
        await pool(
          IN_FLIGHT,
          live.map(({ room, socket }) => async () => {
            for (const producer of producers.get(room.code) ?? []) {
              if (producer.owner === socket) continue;
              const consumed = await socket.request('meeting.consume.start', {
                room_code: room.code,
                transport_id: recv.get(socket),
                producer_id: producer.id,
                rtp_capabilities: room.caps,
              });
              consume.push(consumed.ms);
            }
          }),
        );
        // Chat: every meeting sends CHATS_PER_MEETING lines at once, each awaited at all 8.
        const chats: number[] = [];
        const waiting = new Map<string, { sent: number; seen: number; done: () => void }>();
        for (const { socket } of live) {
          socket.onFrame = (frame) => {
            if (frame.event !== 'meeting.chat') return;
            const w = waiting.get(frame.data.content as string);
            if (w && ++w.seen === MEMBERS) {
              chats.push(performance.now() - w.sent);
              w.done();
            }
          };
        }
        await pool(
          IN_FLIGHT,
          rooms.flatMap((room, m) =>
            Array.from({ length: CHATS_PER_MEETING }, (_, c) => async () => {
              const content = `${label} chat ${m}.${c}`;
              const seen = new Promise<void>((done) =>
                waiting.set(content, { sent: performance.now(), seen: 0, done }),
              );
              await http.call(
                'POST',
                `/meeting/rooms/${room.code}/chats`,
                room.members[c % MEMBERS]!.token,
                {
                  content,
                },
              );
              await seen;
            }),
          ),
        );
        return { joins, create, produce, consume, chats };
      };
      // A fresh process runs its hot paths unoptimised at first: V8 optimises the join
      // path over its first thousand or so joins (CPU per join about halves; with
      // --no-opt it stays flat). So the warm-up members join WARM_UP_ROUNDS rounds of
      // new meetings, which end after each, the last round with the whole flow; all
      // uncounted but the first round's join p99, the figure of a fresh node.
      const warmPeople = await register('scale_w', WARM_UP_MEETINGS);
      let coldJoins: number[] = [];
      for (let round = 1; round < WARM_UP_ROUNDS; round++) {
        const rooms = await open(`scale_w${round}`, warmPeople);
        const joins = await joinAll(rooms);
        if (round === 1) coldJoins = joins;
        await end(rooms);
      }
      const warm = await open('scale_w', warmPeople);
      await exercise(warm, 'warm-up');
      await end(warm);
      for (const socket of sockets.splice(0)) socket.close();
      // MEASURED_ROUNDS rounds of `meetings` new meetings, the same members, each round's
      // meetings ended before the next: each figure is the median of the rounds' p99s (one
      // round's p99 moves with whatever else this shared machine runs at that moment).
      const people = await register('scale_m', meetings);
      await quiet(node.process.pid!);
      const rounds: Awaited<ReturnType<typeof exercise>>[] = [];
      for (let round = 1; round <= MEASURED_ROUNDS; round++) {
        const rooms = await open(`scale_m${round}`, people);
        rounds.push(await exercise(rooms, `measured ${round}`));
        if (round === MEASURED_ROUNDS) break;
        await end(rooms);
        for (const socket of sockets.splice(0)) socket.close();
        await quiet(node.process.pid!);
      }
      const medianP99 = (of: (r: (typeof rounds)[number]) => number[]) =>
        median(rounds.map((r) => p99(of(r))));
      const perRound = (of: (r: (typeof rounds)[number]) => number[]) =>
        rounds.map((r) => p99(of(r)).toFixed(1)).join(' / ');
      console.log(
        `  ${meetings} meetings, p99 per round: REST join ${perRound((r) => r.joins)}, ` +
          `produce.start ${perRound((r) => r.produce)}, chat ${perRound((r) => r.chats)}`,
      );
      return {
        rest_join_p99_ms: medianP99((r) => r.joins),
        fresh_node_join_p99_ms: p99(coldJoins),
        transport_create_p99_ms: medianP99((r) => r.create),
        produce_start_p99_ms: medianP99((r) => r.produce),
        consume_start_p99_ms: medianP99((r) => r.consume),
        consumers: rounds.at(-1)!.consume.length,
        chat_p99_ms: medianP99((r) => r.chats),
        // With the last round's meetings live.
        rss_mib: (await node.ask<{ rss: number }>('memory')).rss / 2 ** 20,
      };
    } finally {
      for (const socket of sockets) socket.close();
      await node.close();
    }
  },
};
