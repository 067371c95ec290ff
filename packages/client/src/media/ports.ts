/**
 * What the media helpers (./meeting-media.ts, ./voice-media.ts) use of the socket and of
 * mediasoup-client's Device: narrow, so that a test drives them with a scripted socket and
 * device, without a browser. The package's RealtimeClient is a MediaSocket.
 */
import type { Device } from 'mediasoup-client';
import type { FrameDataOf, ServerEventName } from '../protocol.js';

/** A pushed frame of event `E`, as far as the media helpers read it: its declared data. */
export interface MediaFrame<E extends ServerEventName = ServerEventName> {
  readonly data: FrameDataOf<E>;
}

/** The socket's requests (resolved with the ACK's data) and pushed frames. */
export interface MediaSocket {
  request<T = Record<string, unknown>>(
    event: string,
    data?: Record<string, unknown>,
    options?: { timeoutMs?: number },
  ): Promise<T>;
  /** Listens to a pushed event; returns the function that stops listening. */
  on<E extends ServerEventName>(event: E, handler: (frame: MediaFrame<E>) => void): () => void;
}

/** The device: loaded with a router's capabilities, then making transports. */
export type MediaDevice = Pick<
  Device,
  'load' | 'rtpCapabilities' | 'createRecvTransport' | 'createSendTransport'
>;
