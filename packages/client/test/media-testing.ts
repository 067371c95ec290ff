/** Test-only: what the media helpers' unit tests share: a scripted socket and device. */
import type { MediaDevice, MediaFrame, MediaSocket } from '../src/media/index.js';
import type { FrameDataOf, ServerEventName } from '../src/protocol.js';
import { RealtimeError } from '../src/realtime.js';

/** A refused ACK of `reason`, as the socket rejects it. */
export const refused = (reason: string): Promise<never> =>
  Promise.reject(new RealtimeError(`refused: ${reason}`, reason));

/** Lets the promise chains a step started run to their end (no timer fires meanwhile). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

type Answer = (data: Record<string, unknown>) => Promise<unknown>;

/**
 * A socket whose answers the test scripts per event (in order; the last one answers every
 * later request), that records every request, and delivers the frames it is given.
 */
export class ScriptedSocket implements MediaSocket {
  readonly requests: { event: string; data: Record<string, unknown>; timeoutMs?: number }[] = [];
  private readonly answers = new Map<string, Answer[]>();
  private readonly handlers = new Map<string, (frame: MediaFrame) => void>();

  request<T>(
    event: string,
    data: Record<string, unknown> = {},
    options: { timeoutMs?: number } = {},
  ): Promise<T> {
    this.requests.push({ event, data, timeoutMs: options.timeoutMs });
    const queue = this.answers.get(event) ?? [];
    const answer = queue.length > 1 ? queue.shift()! : queue[0];
    return (answer ? answer(data) : Promise.resolve({})) as Promise<T>;
  }

  on<E extends ServerEventName>(event: E, handler: (frame: MediaFrame<E>) => void): () => void {
    this.handlers.set(event, handler as (frame: MediaFrame) => void);
    return () => this.handlers.delete(event);
  }

  script(event: string, ...answers: Answer[]): void {
    this.answers.set(event, answers);
  }

  /** Pushes a frame of `event` with its declared data. */
  deliver<E extends ServerEventName>(event: E, data: FrameDataOf<E>): void {
    this.handlers.get(event)?.({ data });
  }

  sent(event: string) {
    return this.requests.filter((r) => r.event === event);
  }
}

/** What a scripted device's send transport was asked to produce. */
export interface Produced {
  readonly transportId: string;
  readonly codecOptions: unknown;
}

/** A transport's connection state as the test sets it, by transport id. */
export type ConnectionStates = Map<string, (state: 'failed' | 'connected') => void>;

/**
 * A mediasoup-client Device stand-in whose transports consume and produce without a
 * browser; each produce is recorded in `produced`, and each transport's
 * 'connectionstatechange' listener in `states` (the test calls it). (A fake of a class: the
 * one cast.)
 */
export function scriptedDevice(
  produced: Produced[] = [],
  states: ConnectionStates = new Map(),
): MediaDevice {
  const transport = ({ id }: { id: string }) => ({
    id,
    on: (event: string, listener: (state: 'failed' | 'connected') => void) => {
      if (event === 'connectionstatechange') states.set(id, listener);
    },
    close: () => undefined,
    consume: (info: { id: string; kind?: string }) =>
      Promise.resolve({
        id: info.id,
        kind: info.kind,
        track: {},
        rtpParameters: { encodings: [{ ssrc: 1 }] },
        close: () => undefined,
      }),
    produce: (options: { codecOptions?: unknown }) => {
      produced.push({ transportId: id, codecOptions: options.codecOptions });
      return Promise.resolve({ id: 'my-producer', close: () => undefined });
    },
  });
  const device = {
    load: () => Promise.resolve(),
    rtpCapabilities: {},
    createRecvTransport: transport,
    createSendTransport: transport,
  };
  return device as unknown as MediaDevice;
}
