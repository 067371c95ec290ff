/** Test-only: what the media helpers' unit tests share. */
import { RealtimeError } from '../src/realtime.js';

/** A refused ACK of `reason`, as the socket rejects it. */
export const refused = (reason: string): Promise<never> =>
  Promise.reject(new RealtimeError(`refused: ${reason}`, reason));

/** Lets the promise chains a step started run to their end (no timer fires meanwhile). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}
