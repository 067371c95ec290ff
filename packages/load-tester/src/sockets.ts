/**
 * The load run's sockets: one `/ws` per user through the SDK's RealtimeClient, counting the
 * frames of the events the run drives, and a scheduler that fires at a rate for a time.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { RealtimeClient, socketUrl, type SocketConstructor } from '../../client/src/index.js';
import type { LoadUser } from './users.js';

export interface CountingSocket {
  readonly client: RealtimeClient;
  /** Frames received of the counted events. */
  readonly got: () => number;
}

/** An open socket of `user` that counts the frames whose event is in `counted`. */
export async function openSocket(
  baseUrl: string,
  user: LoadUser,
  counted: ReadonlySet<string>,
): Promise<CountingSocket> {
  const client = new RealtimeClient({
    url: () => socketUrl(baseUrl, user.token),
    WebSocket: WebSocket as unknown as SocketConstructor,
  });
  let got = 0;
  client.onAny((frame) => {
    if (counted.has(frame.event)) got++;
  });
  const opened = new Promise<void>((resolve) => {
    const off = client.onOpen(() => {
      off();
      resolve();
    });
  });
  client.connect();
  await opened;
  return { client, got: () => got };
}

/**
 * Calls `fire` `ratePerSecond` times a second until `untilMs` (performance.now()), without
 * waiting for one call before the next (an open loop, as independent users act); resolves
 * once every call has ended. A rate of 0 fires nothing.
 */
export async function atRate(
  ratePerSecond: number,
  untilMs: number,
  fire: (i: number) => Promise<unknown>,
): Promise<void> {
  if (ratePerSecond <= 0) return;
  const period = 1_000 / ratePerSecond;
  const calls: Promise<unknown>[] = [];
  // Rooms start out of phase, so that their calls do not all land at once.
  let next = performance.now() + Math.random() * period;
  for (let i = 0; next < untilMs; i++, next += period) {
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
    calls.push(fire(i));
  }
  await Promise.all(calls);
}

/** Runs `jobs` with at most `limit` at once. */
export async function pool(
  limit: number,
  jobs: readonly (() => Promise<unknown>)[],
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, jobs.length) }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }),
  );
}
