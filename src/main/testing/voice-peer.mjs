/* global window, navigator, MediaStream, document */
/**
 * Runs in headless Chromium (bundled with mediasoup-client by esbuild): one voice-room
 * member over the node's public `/ws` only. `room.subscribe`, `voice.media.join` (router
 * capabilities and the live producers), a recv transport consuming every seat's audio
 * (paused on the server until `voice.consume.resume`), and, for a seat holder, a send
 * transport producing the fake microphone.
 */
import { Device } from 'mediasoup-client';
import { connectSignal, wireTransport } from './signalling-peer.mjs';

const state = {
  frames: [],
  errors: [],
  /** The member's account id, a number as frames carry it. */
  userId: null,
  roomId: null,
  device: null,
  signal: null,
  send: null,
  recv: null,
  /** producer_id → consumer (null while being created). */
  consumers: new Map(),
  resumed: new Set(),
};
let consuming = Promise.resolve();
const request = (event, data) => state.signal.request(event, data);

function onFrame(frame) {
  if (frame.event === 'voice.producer.new') onProducer(frame.data);
}

function onProducer({ user_id: userId, producer_id: producerId, closed }) {
  if (userId === state.userId) return;
  if (closed) {
    state.consumers.get(producerId)?.close();
    return;
  }
  if (state.consumers.has(producerId)) return;
  state.consumers.set(producerId, null);
  consuming = consuming
    .then(() => consume(producerId))
    .catch((error) => state.errors.push(`consume ${producerId}: ${error.message}`));
}

async function consume(producerId) {
  const info = await request('voice.consume.start', {
    room_id: state.roomId,
    transport_id: state.recv.id,
    producer_id: producerId,
    rtp_capabilities: state.device.rtpCapabilities,
  });
  const consumer = await state.recv.consume(info);
  state.consumers.set(producerId, consumer);
  const element = document.createElement('audio');
  Object.assign(element, { autoplay: true, muted: true });
  element.srcObject = new MediaStream([consumer.track]);
  document.body.append(element);
  // Mounted: the server may forward it now.
  await request('voice.consume.resume', { consumer_id: consumer.id });
  state.resumed.add(consumer.id);
}

const wire = (transport) => wireTransport(transport, request, 'voice', { room_id: state.roomId });

/** Follows the room and consumes every seat's audio; resolves with the media join's answer. */
async function start({ wsUrl, roomId, userId }) {
  Object.assign(state, { roomId, userId });
  state.signal = await connectSignal(wsUrl, state.frames, onFrame);
  await request('room.subscribe', { room_id: roomId });
  const joined = await request('voice.media.join', { room_id: roomId });
  state.device = new Device();
  await state.device.load({ routerRtpCapabilities: joined.rtp_capabilities });
  const create = (direction) => request('voice.transport.create', { room_id: roomId, direction });
  state.recv = wire(state.device.createRecvTransport(await create('recv')));
  for (const p of joined.producers) onProducer({ ...p, closed: false });
  return joined;
}

/** Produces the fake microphone; resolves with the producer id, or `error: …`. */
async function publish() {
  try {
    if (!state.send) {
      state.send = wire(
        state.device.createSendTransport(
          await request('voice.transport.create', { room_id: state.roomId, direction: 'send' }),
        ),
      );
    }
    const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    const producer = await state.send.produce({ track: stream.getAudioTracks()[0] });
    return producer.id;
  } catch (error) {
    return `error: ${error.message}`;
  }
}

/** Bytes received per producer consumed (inbound-rtp of the consumer's SSRC). */
async function received() {
  if (!state.recv) return {};
  const report = await state.recv.getStats();
  const inbound = [];
  report.forEach((s) => {
    if (s.type === 'inbound-rtp') inbound.push(s);
  });
  const out = {};
  for (const [producerId, c] of state.consumers) {
    if (!c) continue;
    const ssrc = c.rtpParameters.encodings[0].ssrc;
    out[producerId] = inbound.find((i) => i.ssrc === ssrc)?.bytesReceived ?? 0;
  }
  return out;
}

function log() {
  return { frames: state.frames, errors: state.errors, closed: state.signal?.closed ?? null };
}

window.peer = { start, publish, received, log };
window.peerReady = true;
