/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument -- the API's JSON, read by a bench */
/**
 * `npm run bench:meeting`: meetings on one real node (its HTTP API over loopback, its `/ws`),
 * on the embedded backend (SQLite + in-process) and on the cluster backend (MariaDB + Redis,
 * when they answer), in one run:
 * - join + leave cycles through REST, against the voice room's join + leave on the same node
 *   as the baseline, in interleaved short rounds (ratio = median of the per-pair meeting / voice);
 * - chat sends with 8 members following over `/ws`: sends/s, and send-to-broadcast p99 (from
 *   the REST send until all 8 members have the `meeting.chat` frame);
 * - the time from a REST join to `meeting.member.joined` at the other members.
 * Quote ratios and medians: machines are shared and noisy. Last lines machine-readable.
 */
import WebSocket from 'ws';
import { clusterSkipReason } from '../src/testing/backends.js';
import { openBenchNode } from './bench-node.js';
import { api, users } from './http-api.js';
import { describeRatios, interleave, median, quantile, ROUNDS, runLoad, SECONDS } from './load.js';

const MEMBERS = 8;

/** A member's socket on the meeting: resolves once `meeting.room.join` is ACKed. */
async function follow(
  base: string,
  token: string,
  code: string,
  onFrame: (frame: { event: string; data: any }) => void,
): Promise<WebSocket> {
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/ws?token=${token}`);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const joined = new Promise<void>((resolve) => {
    ws.on('message', (raw: Buffer) => {
      const frame = JSON.parse(raw.toString('utf8')) as { event: string; data: any };
      if (frame.event === 'meeting.room.join.ack') resolve();
      onFrame(frame);
    });
  });
  ws.send(JSON.stringify({ event: 'meeting.room.join', seq: 1, data: { room_code: code } }));
  await joined;
  return ws;
}

async function benchBackend(name: string, cluster: boolean) {
  const { base, close } = await openBenchNode(cluster);
  try {
    const http = api(base);
    // One active meeting per user: each meeting has its own host.
    const hosts = await users(
      base,
      Array.from({ length: 5 }, (_, i) => `bench_host${i}`),
    );
    const others = await users(
      base,
      Array.from({ length: 16 }, (_, i) => `bench_m${i}`),
    );

    // Join + leave: 8 workers, each its own user in one of 4 meetings / 4 voice rooms.
    const meetings: string[] = [];
    const rooms: string[] = [];
    for (let i = 0; i < 4; i++) {
      const t = hosts[i]!.token;
      meetings.push(
        (await http.call('POST', '/meeting/rooms', t, { title: `m${i}` })).room.room_code,
      );
      rooms.push((await http.call('POST', '/voice/rooms', t, { title: `v${i}` })).room_id);
    }
    const meetingCycle = async (w: number) => {
      const code = meetings[w % 4]!;
      const t = others[w]!.token;
      await http.call('POST', `/meeting/rooms/${code}/join`, t, {});
      await http.call('POST', `/meeting/rooms/${code}/leave`, t, {});
    };
    const voiceCycle = async (w: number) => {
      const room = rooms[w % 4]!;
      const t = others[w]!.token;
      await http.call('POST', `/voice/rooms/${room}/join`, t, {});
      await http.call('POST', `/voice/rooms/${room}/leave`, t, {});
    };
    const joinLeave = await interleave(
      ROUNDS,
      () => runLoad(8, SECONDS * 1000, voiceCycle),
      () => runLoad(8, SECONDS * 1000, meetingCycle),
      (r, voice, meeting) =>
        console.log(
          `${name} round ${r}: meeting join+leave ${meeting.perSecond.toFixed(0)}/s p99 ${meeting.p99Ms.toFixed(1)} ms (errors ${meeting.errors}); voice ${voice.perSecond.toFixed(0)}/s p99 ${voice.p99Ms.toFixed(1)} ms`,
        ),
    );
    console.log(`${name}: meeting/voice join+leave per round ${describeRatios(joinLeave)}`);
    const meetingRates = joinLeave.b.map((m) => m.perSecond);
    const p99s = joinLeave.b.map((m) => m.p99Ms);

    // Chat with 8 members following.
    const host = hosts[4]!;
    const code = (await http.call('POST', '/meeting/rooms', host.token, { title: 'chat' })).room
      .room_code;
    // Members 8–14: the join/leave workers (0–7) stay out of this meeting.
    const members = [host, ...others.slice(8, 8 + MEMBERS - 1)];
    for (const m of members.slice(1))
      await http.call('POST', `/meeting/rooms/${code}/join`, m.token, {});
    const arrivals = new Map<string, { sent: number; seen: number; done?: (ms: number) => void }>();
    const joinedAt = new Map<number, { at: number; seen: number; done?: (ms: number) => void }>();
    const sockets: WebSocket[] = [];
    for (const m of members) {
      sockets.push(
        await follow(base, m.token, code, (frame) => {
          if (frame.event === 'meeting.chat') {
            const a = arrivals.get(frame.data.content as string);
            if (a && ++a.seen === members.length) a.done?.(performance.now() - a.sent);
          } else if (frame.event === 'meeting.member.joined') {
            const j = joinedAt.get(frame.data.participant.user_id as number);
            if (j && ++j.seen === members.length - 1) j.done?.(performance.now() - j.at);
          }
        }),
      );
    }
    const broadcast: number[] = [];
    let n = 0;
    const chat = await runLoad(4, SECONDS * 1000 * ROUNDS, async (w) => {
      const content = `c${n++}`;
      const done = new Promise<number>((resolve) => {
        arrivals.set(content, { sent: performance.now(), seen: 0, done: resolve });
      });
      await http.call('POST', `/meeting/rooms/${code}/chats`, members[w]!.token, { content });
      broadcast.push(await done);
    });
    broadcast.sort((a, b) => a - b);
    // REST join → meeting.member.joined at the 7 others: the eighth member leaves and comes back.
    const comer = members[MEMBERS - 1]!;
    const joins: number[] = [];
    for (let i = 0; i < 20; i++) {
      await http.call('POST', `/meeting/rooms/${code}/leave`, comer.token, {});
      const done = new Promise<number>((resolve) =>
        joinedAt.set(comer.id, { at: performance.now(), seen: 0, done: resolve }),
      );
      await http.call('POST', `/meeting/rooms/${code}/join`, comer.token, {});
      joins.push(await done);
    }
    for (const s of sockets) s.close();
    joins.sort((a, b) => a - b);
    const result = {
      joinLeavePerS: median(meetingRates),
      joinLeaveP99: median(p99s),
      ratio: joinLeave.ratio,
      chatPerS: chat.perSecond,
      chatP99: quantile(broadcast, 0.99),
      joinToFrameP50: quantile(joins, 0.5),
      joinToFrameP99: quantile(joins, 0.99),
    };
    console.log(
      `${name}: join+leave ${result.joinLeavePerS.toFixed(0)}/s (median), p99 ${result.joinLeaveP99.toFixed(1)} ms, ratio to voice join+leave ${result.ratio.toFixed(2)}; chat ${result.chatPerS.toFixed(0)} sends/s, send→all ${MEMBERS} p99 ${result.chatP99.toFixed(1)} ms; REST join→member.joined p50 ${result.joinToFrameP50.toFixed(1)} ms p99 ${result.joinToFrameP99.toFixed(1)} ms`,
    );
    return result;
  } finally {
    await close();
  }
}

const embedded = await benchBackend('embedded', false);
const skip = await clusterSkipReason().catch((e: unknown) => String(e));
const cluster = skip ? null : await benchBackend('cluster', true);
if (skip) console.log(`cluster backend skipped: ${skip}`);
for (const [label, r] of [
  ['embedded', embedded],
  ['cluster', cluster],
] as const) {
  if (!r) continue;
  console.log(`meeting_${label}_ratio_join_leave_vs_voice=${r.ratio.toFixed(3)}`);
  console.log(`meeting_${label}_join_to_frame_p99_ms=${r.joinToFrameP99.toFixed(1)}`);
}
console.log(`meeting_join_leave_per_s=${embedded.joinLeavePerS.toFixed(0)}`);
console.log(`meeting_chat_p99_ms=${embedded.chatP99.toFixed(1)}`);
process.exit(0);
