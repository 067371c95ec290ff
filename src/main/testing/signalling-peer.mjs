/* global WebSocket */
/**
 * What the browser test peers share (bundled into each by esbuild): a `/ws` client that
 * matches ACKs to requests by `seq`, and the mediasoup-client transport wiring of a room
 * kind's media events (`<prefix>.transport.connect`, `<prefix>.produce.start`).
 */

/** Opens `/ws`; `onEvent` gets every frame that is not an awaited ACK. */
export async function connectSignal(wsUrl, frames, onEvent) {
  let seq = 0;
  const waiting = new Map();
  const ws = new WebSocket(wsUrl);
  const signal = { ws, closed: null };
  ws.onmessage = (m) => {
    const frame = JSON.parse(m.data);
    frames.push(frame);
    const pending = frame.event.endsWith('.ack') ? waiting.get(frame.seq) : undefined;
    if (pending && frame.event === `${pending.event}.ack`) {
      waiting.delete(frame.seq);
      if (frame.code === 0) pending.resolve(frame.data);
      else pending.reject(new Error(`${frame.reason}: ${frame.message}`));
      return;
    }
    onEvent(frame);
  };
  ws.onclose = (e) => (signal.closed = { code: e.code, reason: e.reason });
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error('WebSocket failed'));
  });
  /** Sends a C→S event; resolves with the ACK's data, rejects with a failed ACK's reason. */
  signal.request = (event, data) => {
    const n = ++seq;
    return new Promise((resolve, reject) => {
      waiting.set(n, { event, resolve, reject });
      ws.send(JSON.stringify({ event, seq: n, data }));
    });
  };
  return signal;
}

/** Wires a mediasoup-client transport's connect and produce to `<prefix>.*` events. */
export function wireTransport(transport, request, prefix, room) {
  transport.on('connect', ({ dtlsParameters }, callback, errback) => {
    request(`${prefix}.transport.connect`, {
      ...room,
      transport_id: transport.id,
      dtls_parameters: dtlsParameters,
    }).then(() => callback(), errback);
  });
  transport.on('produce', ({ kind, rtpParameters }, callback, errback) => {
    request(`${prefix}.produce.start`, {
      ...room,
      transport_id: transport.id,
      kind,
      rtp_parameters: rtpParameters,
    }).then(({ producer_id: id }) => callback({ id }), errback);
  });
  return transport;
}
