/**
 * Child process of `bench/voice-room.bench.ts`: the room's following WebSocket clients, so
 * that they do not share the server's event loop. Driven over IPC:
 *
 * - `connect {url, secret, userIds, roomId}` → `connected {ok, failed}`: a token per user
 *   (signed with the node's secret, as its accounts would), each socket subscribed to the room
 * - `arrivals {ids}` → `arrivals {list: [id, count, lastMs][]}`: per chat message id, how many
 *   sockets got its `voice.chat.message` frame and when the last one did (wall clock, ms)
 */
import { WebSocket } from 'ws';
import { JwtTokens } from '../src/accounts/tokens.js';
import { systemClock } from '../src/shared/clock.js';

type Command =
  | { type: 'connect'; url: string; secret: string; userIds: string[]; roomId: string }
  | { type: 'arrivals'; ids: number[] }
  | { type: 'exit' };

/** Wall clock with sub-millisecond resolution, comparable across processes. */
const now = (): number => performance.timeOrigin + performance.now();
const CHAT = Buffer.from('"voice.chat.message"');
const MESSAGE_ID = Buffer.from('"message_id":');

const counts = new Map<number, number>();
const last = new Map<number, number>();
const sockets: WebSocket[] = [];

/** The chat frame's message id without parsing the JSON (2,000 sockets × every line). */
function messageIdOf(frame: Buffer): number {
  if (frame.indexOf(CHAT) < 0) return -1;
  const at = frame.indexOf(MESSAGE_ID);
  if (at < 0) return -1;
  let v = 0;
  for (let i = at + MESSAGE_ID.length; i < frame.length; i++) {
    const c = frame[i]!;
    if (c < 48 || c > 57) break;
    v = v * 10 + (c - 48);
  }
  return v;
}

async function connectOne(url: string, token: string, roomId: string): Promise<boolean> {
  const ws = new WebSocket(`${url}?token=${token}`, { perMessageDeflate: false });
  try {
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const subscribed = new Promise<boolean>((resolve) => {
      ws.on('message', (data: Buffer) => {
        const id = messageIdOf(data);
        if (id > 0) {
          counts.set(id, (counts.get(id) ?? 0) + 1);
          last.set(id, now());
        } else if (data.includes('room.subscribe.ack')) {
          resolve(data.includes('"code":0'));
        }
      });
    });
    ws.send(JSON.stringify({ event: 'room.subscribe', seq: 1, data: { room_id: roomId } }));
    const ok = await subscribed;
    sockets.push(ws);
    return ok;
  } catch {
    ws.terminate();
    return false;
  }
}

process.on('message', (command: Command) => {
  void (async () => {
    if (command.type === 'connect') {
      const tokens = new JwtTokens({ secret: command.secret, ttlS: 3600, clock: systemClock });
      let ok = 0;
      let failed = 0;
      // 50 at a time: a connect storm is not what this bench measures.
      for (let i = 0; i < command.userIds.length; i += 50) {
        const batch = command.userIds.slice(i, i + 50);
        const results = await Promise.all(
          batch.map(async (userId) => {
            const { token } = await tokens.issue({
              appCode: 'default',
              userId,
              username: `l${userId}`,
            });
            return connectOne(command.url, token, command.roomId);
          }),
        );
        for (const r of results)
          if (r) ok++;
          else failed++;
      }
      process.send!({ type: 'connected', ok, failed });
    } else if (command.type === 'arrivals') {
      const list = command.ids.map((id) => [id, counts.get(id) ?? 0, last.get(id) ?? 0]);
      for (const id of command.ids) {
        counts.delete(id);
        last.delete(id);
      }
      process.send!({ type: 'arrivals', list });
    } else {
      for (const ws of sockets) ws.terminate();
      process.exit(0);
    }
  })();
});

process.send!({ type: 'ready' });
