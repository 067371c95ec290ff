/**
 * The signalling of a mediasoup-client transport, the same for both room kinds under their
 * prefix (docs/protocol.md: `meeting.*` with `room_code`, `voice.*` with `room_id`): its
 * 'connect' sends `<prefix>.transport.connect`, its 'produce' `<prefix>.produce.start`.
 * `onFailed` runs when its connection fails (ICE or DTLS gave up: e.g. the media server's
 * worker under it died and its reset frame never came): the helpers make their media again.
 */
import type { Transport } from 'mediasoup-client/types';
import type { MediaSocket } from './ports.js';

export function signalled(
  socket: MediaSocket,
  prefix: 'meeting' | 'voice',
  room: Record<string, unknown>,
  transport: Transport,
  onFailed?: () => void,
): Transport {
  if (onFailed) {
    transport.on('connectionstatechange', (state) => {
      if (state === 'failed') onFailed();
    });
  }
  transport.on('connect', ({ dtlsParameters }, callback, errback) => {
    socket
      .request(`${prefix}.transport.connect`, {
        ...room,
        transport_id: transport.id,
        dtls_parameters: dtlsParameters,
      })
      .then(() => callback(), errback);
  });
  transport.on('produce', ({ kind, rtpParameters, appData }, callback, errback) => {
    // A shared screen says so (meetings); a microphone or a camera is the kind's default.
    const source = typeof appData.source === 'string' ? { source: appData.source } : {};
    socket
      .request<{ producer_id: string }>(`${prefix}.produce.start`, {
        ...room,
        transport_id: transport.id,
        kind,
        rtp_parameters: rtpParameters,
        ...source,
      })
      .then(({ producer_id: id }) => callback({ id }), errback);
  });
  return transport;
}

/**
 * How the helpers send a microphone: Opus with DTX, so a quiet mic sends almost nothing (a
 * seat that is silent costs the media server and its listeners next to nothing), and with
 * in-band FEC, so a lost packet is mostly recovered from the next.
 */
export const MICROPHONE_OPUS = { opusDtx: true, opusFec: true } as const;
