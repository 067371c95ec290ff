/**
 * Child process of the `connections` dimension: the WebSocket clients, in a process of
 * their own so they neither share the node's event loop nor count in its memory. Driven
 * over IPC:
 *
 * - `storm {url, sockets, perSecond, secret, roomCount}` → `storm {connected, failed,
 *   failures, follows, ms}` (`failures`: why sockets failed, e.g. `ECONNRESET: 3`): opens
 *   the sockets at a steady `perSecond` (open loop: a slow server does not slow the storm
 *   down), each following its rooms (connections-plan.ts) as soon as it is open; answered
 *   once every socket has all its follows ACKed or has failed
 * - `refollow` → `refollow {follows, ms}`: every socket unfollows and follows its rooms
 *   again, all at once
 * - `open` → `open {sockets}`: how many are still open
 * - `drop` → `drop {sockets}`: closes every socket (as a network cut would: no close frame)
 *   and forgets them, so that the next `storm` reconnects them all
 */
import WebSocket from 'ws';
import { JwtTokens } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/shared/clock.js';
import { roomsOf, userIdOf } from './connections-plan.js';

type Command =
  | {
      type: 'storm';
      url: string;
      sockets: number;
      perSecond: number;
      secret: string;
      appCode: string;
      roomCount: number;
    }
  | { type: 'refollow' }
  | { type: 'open' }
  | { type: 'drop' }
  | { type: 'exit' };

interface Client {
  readonly ws: WebSocket;
  readonly rooms: string[];
  seq: number;
  /** Follow ACKs still awaited, and who to tell when none are. */
  awaiting: number;
  onFollowed: (() => void) | null;
}

const clients: Client[] = [];
/** Follows the server refused (the dimension reports them: they should be 0). */
let refused = 0;
/** Why sockets failed: the error's code, else the close code; counted. */
const failures = new Map<string, number>();
const countFailure = (why: string) => failures.set(why, (failures.get(why) ?? 0) + 1);
const send = (message: Record<string, unknown>) => process.send?.(message);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function request(client: Client, event: string, roomId: string): void {
  client.ws.send(JSON.stringify({ event, seq: ++client.seq, data: { room_id: roomId } }));
}

function follow(client: Client): Promise<void> {
  return new Promise((resolve) => {
    client.awaiting = client.rooms.length;
    client.onFollowed = resolve;
    for (const room of client.rooms) request(client, 'room.subscribe', room);
  });
}

/** One socket: resolves true once open with every follow ACKed, false if it failed. */
function connect(url: string, token: string, rooms: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${url}?token=${token}`, { perMessageDeflate: false });
    const client: Client = { ws, rooms, seq: 0, awaiting: 0, onFollowed: null };
    ws.on('message', (data: Buffer) => {
      // Only the follows' ACKs matter here (a refusal carries code -1).
      if (!data.includes('room.subscribe.ack')) return;
      if (data.includes('"code":-1')) refused += 1;
      if (--client.awaiting === 0) client.onFollowed?.();
    });
    let followed = false;
    let error: string | undefined;
    ws.once('open', () => {
      clients.push(client);
      void follow(client).then(() => {
        followed = true;
        resolve(true);
      });
    });
    ws.once('close', (code: number) => {
      if (!followed) countFailure(error ?? `close ${code}`);
      resolve(false);
      client.onFollowed?.(); // a follow still awaited never comes
    });
    ws.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
  });
}

/** Tokens by socket index, minted once: a reconnect storm presents the same ones. */
const minted: string[] = [];

async function storm(command: Extract<Command, { type: 'storm' }>) {
  const tokens = new JwtTokens({ secret: command.secret, ttlS: 86_400, clock: systemClock });
  // Minted first: signing must not slow the storm down.
  for (let i = minted.length; i < command.sockets; i++) {
    const userId = userIdOf(i);
    minted.push(
      (await tokens.issue({ userId, appCode: command.appCode, username: `user${userId}` })).token,
    );
  }
  const pending: Promise<boolean>[] = [];
  const started = performance.now();
  for (let i = 0; i < command.sockets; i++) {
    const due = started + (i * 1000) / command.perSecond;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    pending.push(connect(command.url, minted[i]!, roomsOf(i, command.roomCount)));
  }
  const results = await Promise.all(pending);
  const connected = results.filter(Boolean).length;
  return {
    connected,
    failed: results.length - connected,
    failures: [...failures].map(([why, n]) => `${why}: ${n}`).join(', '),
    follows: clients.reduce((n, c) => n + c.rooms.length, 0),
    refused,
    ms: performance.now() - started,
  };
}

async function refollow() {
  const started = performance.now();
  const open = clients.filter((c) => c.ws.readyState === WebSocket.OPEN);
  for (const client of open) {
    for (const room of client.rooms) request(client, 'room.unsubscribe', room);
  }
  await Promise.all(open.map(follow));
  return {
    follows: open.reduce((n, c) => n + c.rooms.length, 0),
    refused,
    ms: performance.now() - started,
  };
}

async function drop() {
  const dropped = clients.splice(0);
  await Promise.all(
    dropped.map(
      (c) =>
        new Promise((resolve) => {
          if (c.ws.readyState === WebSocket.CLOSED) return resolve(undefined);
          c.ws.once('close', resolve);
          c.ws.terminate();
        }),
    ),
  );
  refused = 0;
  failures.clear();
  return { sockets: dropped.length };
}

process.on('message', (command: Command) => {
  void (async () => {
    switch (command.type) {
      case 'storm':
        send({ type: 'storm', ...(await storm(command)) });
        break;
      case 'refollow':
        send({ type: 'refollow', ...(await refollow()) });
        break;
      case 'open':
        send({
          type: 'open',
          sockets: clients.filter((c) => c.ws.readyState === WebSocket.OPEN).length,
        });
        break;
      case 'drop':
        send({ type: 'drop', ...(await drop()) });
        break;
      case 'exit':
        for (const c of clients) c.ws.terminate();
        process.exit(0);
    }
  })();
});
send({ type: 'ready' });
