/* global window, navigator, document, MediaStream */
/**
 * Runs in headless Chromium (bundled with mediasoup-client by esbuild): one meeting member
 * as the seed's front end does it, over the node's public `/ws` only. `Device.load` with the
 * REST answer's `rtp_capabilities`, `meeting.room.join`, a send and a recv transport
 * (`meeting.transport.connect` in their 'connect' event), the fake microphone and camera
 * produced (`meeting.produce.start` in 'produce'), and every other member's producer
 * consumed on `meeting.member.producer.new {closed: false}` (paused on the server; the test
 * decides when `meeting.consume.resume` is sent, so it can look at the paused stream first).
 */
import { Device } from 'mediasoup-client';
import { connectSignal, wireTransport } from './signalling-peer.mjs';

const state = {
  /** Every S→C frame, in arrival order (ACKs included). */
  frames: [],
  errors: [],
  userId: null,
  roomCode: null,
  device: null,
  signal: null,
  send: null,
  recv: null,
  /** producer_id → consumer (a producer may be announced twice: listed and broadcast). */
  consumers: new Map(),
  resumed: new Set(),
};
/** Consumes one at a time, once the recv transport exists (announcements may come first). */
let consuming = null;
let recvReady;
const recvCreated = new Promise((resolve) => (recvReady = resolve));

const request = (event, data) => state.signal.request(event, data);

function onFrame(frame) {
  if (frame.event === 'meeting.member.producer.new') onProducer(frame.data);
}

function onProducer({ user_id: userId, producer_id: producerId, closed }) {
  if (userId === state.userId) return;
  if (closed) {
    state.consumers.get(producerId)?.close();
    return;
  }
  if (state.consumers.has(producerId)) return;
  state.consumers.set(producerId, null);
  consuming = (consuming ?? recvCreated)
    .then(() => consume(producerId))
    .catch((error) => state.errors.push(`consume ${producerId}: ${error.message}`));
}

/** `meeting.consume.start` (the server creates it paused), then the track in a media element. */
async function consume(producerId) {
  const info = await request('meeting.consume.start', {
    room_code: state.roomCode,
    transport_id: state.recv.id,
    producer_id: producerId,
    rtp_capabilities: state.device.rtpCapabilities,
  });
  const consumer = await state.recv.consume(info);
  state.consumers.set(producerId, consumer);
  const element = document.createElement(consumer.kind);
  Object.assign(element, { autoplay: true, muted: true, playsInline: true });
  element.id = `${consumer.kind}-${consumer.id}`;
  element.srcObject = new MediaStream([consumer.track]);
  document.body.append(element);
}

const wire = (transport) =>
  wireTransport(transport, request, 'meeting', { room_code: state.roomCode });

/**
 * Joins the meeting the REST call (create or join) admitted this user to, and produces the
 * fake microphone and camera. Resolves with the producer ids by kind.
 */
async function start({ wsUrl, roomCode, userId, rtpCapabilities }) {
  Object.assign(state, { roomCode, userId });
  state.device = new Device();
  await state.device.load({ routerRtpCapabilities: rtpCapabilities });
  state.signal = await connectSignal(wsUrl, state.frames, onFrame);
  await request('meeting.room.join', { room_code: roomCode });
  const create = (direction) =>
    request('meeting.transport.create', { room_code: roomCode, direction });
  state.send = wire(state.device.createSendTransport(await create('send')));
  state.recv = wire(state.device.createRecvTransport(await create('recv')));
  recvReady();
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
  const producers = {};
  for (const track of stream.getTracks()) {
    producers[track.kind] = (await state.send.produce({ track })).id;
  }
  return producers;
}

/** The consumers so far: id, kind and producer id of each (null while being created). */
function consumers() {
  return [...state.consumers.entries()].map(([producerId, c]) =>
    c ? { producerId, id: c.id, kind: c.kind } : { producerId, id: null, kind: null },
  );
}

/**
 * What arrived per consumer, from the recv transport's RTCPeerConnection stats: the
 * inbound-rtp entry of the consumer's SSRC (absent until a first packet arrives).
 */
async function received() {
  const report = await state.recv.getStats();
  const inbound = [];
  report.forEach((s) => {
    if (s.type === 'inbound-rtp') inbound.push(s);
  });
  const out = {};
  for (const [producerId, c] of state.consumers) {
    if (!c) continue;
    const ssrc = c.rtpParameters.encodings[0].ssrc;
    const s = inbound.find((i) => i.ssrc === ssrc);
    out[producerId] = {
      kind: c.kind,
      bytes: s?.bytesReceived ?? 0,
      packets: s?.packetsReceived ?? 0,
      frames: s?.framesDecoded ?? 0,
    };
  }
  return { connection: state.recv.connectionState, consumers: out };
}

/** What this member's producers sent, per kind, from the send transport's outbound-rtp stats. */
async function sent() {
  const report = await state.send.getStats();
  const out = {};
  report.forEach((s) => {
    if (s.type === 'outbound-rtp') out[s.kind] = (out[s.kind] ?? 0) + (s.bytesSent ?? 0);
  });
  return out;
}

/** `meeting.consume.resume` for every consumer not resumed yet; resolves with their ids. */
async function resume() {
  const ids = [];
  for (const c of state.consumers.values()) {
    if (!c || state.resumed.has(c.id)) continue;
    await request('meeting.consume.resume', { consumer_id: c.id });
    state.resumed.add(c.id);
    ids.push(c.id);
  }
  return ids;
}

/** The frames received so far, and anything that went wrong in the page. */
function log() {
  return { frames: state.frames, errors: state.errors, closed: state.signal?.closed ?? null };
}

window.peer = { start, consumers, received, sent, resume, log };
window.peerReady = true;
