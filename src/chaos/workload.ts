/**
 * The seeded workload: one loop per voice room and per meeting, each sending one command
 * after the other (a short think time between), users shared between rooms and between
 * meetings (so gifts contend for wallets across rooms and joins for the one-meeting rule),
 * top-ups on the side, and some answered requests sent again later to another node. At the
 * end each voice room is closed, so none of its timers is left to commit later.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RpcName } from '../voice-room/api/commands.js';
import type { ChaosClient, Sent } from './client.js';
import type { Prng } from './prng.js';
import type { RtcFeed } from './rtc.js';

export const VOICE_USERS = ['2001', '2002', '2003', '2004', '2005', '2006'];
export const MEETING_USERS = ['1001', '1002', '1003', '1004', '1005'];
export const GIFTS = [
  { gift_id: 'rose', name: 'Rose', price: 10 },
  { gift_id: 'star', name: 'Star', price: 3 },
];
export const INITIAL_BALANCE = 200;
const SEATS = 4;
/** The share of answered requests sent once more, later, to another node. */
const RESEND_SHARE = 0.1;

export interface Loop {
  readonly client: ChaosClient;
  readonly prng: Prng;
  readonly running: () => boolean;
  readonly resends: Set<Promise<void>>;
}

const think = (prng: Prng) => sleep(prng.int(10, 60));

function pickWeighted<T extends string>(prng: Prng, weights: Readonly<Record<T, number>>): T {
  const entries = Object.entries(weights) as [T, number][];
  let r = prng.next() * entries.reduce((sum, [, w]) => sum + w, 0);
  for (const [name, w] of entries) if ((r -= w) < 0) return name;
  return entries[0]![0];
}

/** Sometimes sends an answered request again after a while, as a client whose reply was lost. */
function maybeResend(loop: Loop, sent: Sent): void {
  if (sent.answer === null || !loop.prng.chance(RESEND_SHARE)) return;
  const delay = loop.prng.int(200, 3_000);
  const p: Promise<void> = sleep(delay)
    .then(() => loop.client.resend(sent.record))
    .catch(() => undefined)
    .finally(() => loop.resends.delete(p));
  loop.resends.add(p);
}

/**
 * Sends a command until it has a final answer, the same request id each time (the closing
 * and creating commands must happen).
 */
async function insist(send: () => Promise<Sent>): Promise<Sent> {
  for (let i = 0; ; i++) {
    const sent = await send();
    if (sent.answer !== null || i >= 3) return sent;
  }
}

const VOICE_WEIGHTS = {
  JoinRoom: 18,
  LeaveRoom: 5,
  RoomHeartbeat: 8,
  MicUp: 14,
  MicDown: 7,
  ChangeMicSeat: 5,
  ConfirmMicPublishing: 5,
  SendGift: 18,
  SetMicSeatLock: 3,
  KickUser: 2,
  UnbanUser: 2,
} as const satisfies Partial<Record<RpcName, number>>;

/** One voice room's loop; returns once its room is closed. */
export async function voiceRoomLoop(loop: Loop, rtc: RtcFeed, index: number): Promise<void> {
  const { client, prng } = loop;
  const owner = String(3001 + index);
  let seq = 0;
  const rid = () => `${client.name}-${++seq}`;
  const sessions = new Map<string, string>();
  const created = await insist(() =>
    client.voice('CreateRoom', null, {
      request_id: `${client.name}-create`,
      owner_user_id: owner,
      title: `chaos room ${index}`,
      seat_count: SEATS,
    }),
  );
  if (!created.answer?.ok)
    throw new Error(`room ${index} not created: ${JSON.stringify(created.answer)}`);
  const roomId = String(created.answer.reply.room_id);
  created.record.room = roomId;
  await client.voice('JoinRoom', roomId, { room_id: roomId, request_id: rid(), user_id: owner });
  while (loop.running()) {
    const method = pickWeighted(prng, VOICE_WEIGHTS);
    const user = prng.pick(VOICE_USERS);
    const body: Record<string, unknown> = { room_id: roomId, request_id: rid(), user_id: user };
    switch (method) {
      case 'MicUp':
      case 'ChangeMicSeat':
        body.seat_index = prng.int(0, SEATS - 1);
        break;
      case 'ConfirmMicPublishing':
        body.mic_session_id = sessions.get(user) ?? 'no-session';
        break;
      case 'SendGift': {
        delete body.user_id;
        body.sender_user_id = user;
        const others = VOICE_USERS.filter((u) => u !== user);
        body.receiver_user_ids = prng.chance(0.7) ? [prng.pick(others)] : others.slice(0, 2);
        body.gift_id = prng.pick(GIFTS).gift_id;
        body.count = prng.int(1, 3);
        break;
      }
      case 'SetMicSeatLock':
        delete body.user_id;
        body.operator_user_id = owner;
        body.seat_index = prng.int(0, SEATS - 1);
        body.locked = prng.chance(0.5);
        break;
      case 'KickUser':
      case 'UnbanUser':
        body.operator_user_id = owner;
        break;
      default:
        break;
    }
    const sent = await client.voice(method, roomId, body);
    const reply = sent.answer?.ok ? sent.answer.reply : null;
    if (reply && (method === 'MicUp' || method === 'ChangeMicSeat') && !reply.duplicate) {
      const session = typeof reply.mic_session_id === 'string' ? reply.mic_session_id : '';
      if (session) {
        sessions.set(user, session);
        rtc.sessionOpened(roomId, user, session);
      }
    }
    maybeResend(loop, sent);
    await think(prng);
  }
  const close = { room_id: roomId, request_id: rid(), operator_user_id: owner };
  await insist(() => client.voice('CloseRoom', roomId, close));
}

const MEETING_WEIGHTS = { JoinMeeting: 30, LeaveMeeting: 20, SendChat: 30, KickMember: 4 };

/**
 * One meeting's loop: its host creates it, members come and go. It is left open (no timer of
 * a meeting with members is due soon), so the checker sees who is still active where.
 */
export async function meetingLoop(loop: Loop, index: number): Promise<void> {
  const { client, prng } = loop;
  const host = String(2000 + index);
  let seq = 0;
  const rid = () => `${client.name}-${++seq}`;
  const create = { request_id: rid(), title: `chaos meeting ${index}`, max_members: 8 };
  const created = await insist(() => client.meeting('CreateMeeting', host, null, create));
  if (!created.answer?.ok) {
    throw new Error(`meeting ${index} not created: ${JSON.stringify(created.answer)}`);
  }
  const code = String((created.answer.reply.room as { room_code: string }).room_code);
  created.record.room = code;
  while (loop.running()) {
    const method = pickWeighted(prng, MEETING_WEIGHTS);
    const user = prng.pick(MEETING_USERS);
    let sent: Sent;
    if (method === 'KickMember') {
      sent = await client.meeting('KickMember', host, code, {
        request_id: rid(),
        user_id: Number(user),
      });
    } else if (method === 'SendChat') {
      const who = prng.chance(0.3) ? host : user;
      sent = await client.meeting('SendChat', who, code, {
        request_id: rid(),
        content: `hi ${seq}`,
      });
    } else {
      sent = await client.meeting(method, user, code, { request_id: rid() });
    }
    maybeResend(loop, sent);
    await think(prng);
  }
}

/** Tops a random user up every so often. */
export async function topUpLoop(loop: Loop): Promise<void> {
  let seq = 0;
  while (loop.running()) {
    const user = loop.prng.pick(VOICE_USERS);
    const sent = await loop.client.topUp(
      user,
      loop.prng.int(10, 60),
      `${loop.client.name}-${++seq}`,
    );
    maybeResend(loop, sent);
    await sleep(loop.prng.int(300, 900));
  }
}
