/**
 * What the pages' media modules (./meeting-media.ts, ./voice-media.ts) use of the socket and
 * of mediasoup-client's Device: narrow, so that their tests can drive them without a browser.
 */
import type { Device } from 'mediasoup-client';
import type { RealtimeClient } from './ws';

/** The socket's requests and frames (./ws.ts's RealtimeClient). */
export type MediaSocket = Pick<RealtimeClient, 'request' | 'on'>;

/** The device: loaded with a router's capabilities, then making transports. */
export type MediaDevice = Pick<
  Device,
  'load' | 'rtpCapabilities' | 'createRecvTransport' | 'createSendTransport'
>;
