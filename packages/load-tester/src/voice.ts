/**
 * The voice scenario: each room's owner opens it, its listeners join over REST and follow
 * it over `/ws`; then, per room and second, chat lines, seat cycles (a listener takes a
 * seat, confirms publishing, leaves it) and gifts to the owner. Every member's socket
 * counts the frames these commands owe it. With `--media`, every member listens (plain RTP)
 * and each seat cycle talks for `--talk-ms` between confirming and leaving the seat.
 */
import { requestId } from '../../client/src/index.js';
import type { LoadOptions } from './options.js';
import { RoomAudio } from './plain-audio.js';
import type { Recorder } from './recorder.js';
import { atRate, openSocket, pool, type CountingSocket } from './sockets.js';
import type { LoadUser } from './users.js';

const SEATS = 8;
const GIFT_ID = 'load_test_gift';
/** The frames the driven commands broadcast to the room. */
const COUNTED = new Set([
  'voice.chat.message',
  'voice.mic.up',
  'voice.mic.publishing',
  'voice.mic.released',
  'voice.gift.sent',
]);

interface Room {
  readonly id: string;
  readonly owner: LoadUser;
  readonly listeners: LoadUser[];
  readonly sockets: CountingSocket[];
  readonly socketOf: Map<number, CountingSocket>;
  /** `--media` only. */
  readonly audio: RoomAudio | null;
}

export async function voiceScenario(
  options: LoadOptions,
  recorder: Recorder,
  users: readonly LoadUser[],
): Promise<void> {
  const perRoom = options.listeners + 1;
  const rooms: Room[] = [];
  try {
    for (let r = 0; r < options.rooms; r++) {
      const [owner, ...listeners] = users.slice(r * perRoom, (r + 1) * perRoom) as [LoadUser];
      const created = await owner.rest.call('createRoom', {
        body: { title: `load ${r + 1}`, seat_count: SEATS, request_id: requestId() },
      });
      const room: Room = {
        id: created.room_id,
        owner,
        listeners,
        sockets: [],
        socketOf: new Map(),
        audio: options.media
          ? new RoomAudio({ prefix: 'voice', field: 'room_id', id: created.room_id }, recorder)
          : null,
      };
      rooms.push(room);
      await join(options, recorder, room, owner, false);
    }
    if (options.giftRate > 0) await stockGifts(options, rooms);
    await pool(
      options.joinConcurrency,
      rooms.flatMap((room) =>
        room.listeners.map((user) => () => join(options, recorder, room, user, true)),
      ),
    );
    const until = performance.now() + options.durationS * 1_000;
    await Promise.all(rooms.flatMap((room) => drive(options, recorder, room, until)));
  } finally {
    await settle(recorder, rooms, (room) =>
      room.owner.rest.call('closeRoom', { path: { room_id: room.id }, body: {} }),
    );
  }
}

/** REST join, then the socket follows the room: timed as one join (until frames can come). */
async function join(
  options: LoadOptions,
  recorder: Recorder,
  room: Room,
  user: LoadUser,
  timed: boolean,
) {
  const run = async () => {
    await user.rest.call('joinRoom', { path: { room_id: room.id }, body: {} });
    const socket = await openSocket(options.url, user, COUNTED);
    await socket.client.request('room.subscribe', { room_id: room.id });
    room.sockets.push(socket);
    room.socketOf.set(user.id, socket);
  };
  if (timed) await recorder.time('join', run);
  else await run();
  const socket = room.socketOf.get(user.id);
  if (room.audio && socket) await room.audio.listen(socket.client, user.id);
}

function drive(
  options: LoadOptions,
  recorder: Recorder,
  room: Room,
  until: number,
): Promise<void>[] {
  const path = { room_id: room.id };
  const owe = (frames: number) => (recorder.framesOwed += frames * room.sockets.length);
  const listener = (i: number) => room.listeners[i % room.listeners.length]!;
  if (room.listeners.length === 0) return [];
  return [
    atRate(options.chatRate, until, async (i) => {
      const sent = await recorder.time('chat', () =>
        listener(i).rest.call('sendRoomMessage', {
          path,
          body: { content: `load line ${i}`, request_id: requestId() },
        }),
      );
      if (sent) owe(1);
    }),
    atRate(options.seatRate, until, async (i) => {
      const user = listener(i);
      const up = await recorder.time('mic_up', () =>
        user.rest.call('micUp', { path, body: { seat_index: i % SEATS, request_id: requestId() } }),
      );
      const session = up?.mic_session_id;
      if (!session) return;
      owe(1);
      const socket = room.socketOf.get(user.id);
      const talking =
        room.audio && socket
          ? await recorder.time('produce', () =>
              room.audio!.speaker(socket.client, user.id).produce(),
            )
          : undefined;
      const live = await recorder.time('mic_confirm', () =>
        user.rest.call('confirmMicPublishing', {
          path,
          body: { mic_session_id: session, request_id: requestId() },
        }),
      );
      if (live) owe(1);
      // Talks, then leaves the seat: micDown closes the producer (closing it first would be
      // the seat's audio_stopped, which frees the seat by itself).
      if (talking) await talking.talk(options.talkMs);
      const down = await recorder.time('mic_down', () =>
        user.rest.call('micDown', { path, body: { request_id: requestId() } }),
      );
      if (down) owe(1);
    }),
    atRate(options.giftRate, until, async (i) => {
      const sent = await recorder.time('gift', () =>
        listener(i).rest.call('sendGift', {
          path,
          body: {
            receiver_user_ids: [room.owner.id],
            gift_id: GIFT_ID,
            count: 1,
            request_id: requestId(),
          },
        }),
      );
      if (sent) owe(1);
    }),
  ];
}

/** A one-coin gift in the catalog and enough coins in every listener's wallet. */
async function stockGifts(options: LoadOptions, rooms: readonly Room[]) {
  const admin = { headers: { 'x-admin-token': options.adminToken! } };
  const { rest } = rooms[0]!.owner;
  await rest.call('putGift', {
    ...admin,
    path: { gift_id: GIFT_ID },
    body: { app_code: options.appCode, name: 'Load test', price: 1 },
  });
  const coins = Math.ceil(options.giftRate * options.durationS) + 10;
  for (const room of rooms) {
    for (const user of room.listeners) {
      await rest.call('topUpWallet', {
        ...admin,
        body: {
          app_code: options.appCode,
          user_id: user.id,
          amount: coins,
          request_id: requestId(),
        },
      });
    }
  }
}

/**
 * After the traffic: a moment for the last frames, the frames got counted, the sockets
 * closed and each room ended by `end` (its failures counted, not thrown).
 */
export async function settle<R extends { sockets: CountingSocket[]; audio: RoomAudio | null }>(
  recorder: Recorder,
  rooms: readonly R[],
  end: (room: R) => Promise<unknown>,
): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  for (const room of rooms) {
    room.audio?.settle();
    for (const socket of room.sockets) {
      recorder.framesGot += socket.got();
      socket.client.close();
    }
    await recorder.time('close', () => end(room));
  }
}
