/* global window, navigator, AudioContext */
/**
 * Runs in headless Chromium (bundled with mediasoup-client by esbuild): one WebRTC peer that
 * either sends the fake camera and microphone or receives another peer's producers. It
 * signals through the test server's /rpc/<method>, which calls the real orchestrator client.
 */
import { Device } from 'mediasoup-client';

/** Calls an orchestrator method on the test server. */
async function rpc(method, ...args) {
  const response = await fetch(`/rpc/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(args),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`${method}: ${body.error}`);
  return body.result;
}

/** A mediasoup-client transport wired to the orchestrator (connect / produce callbacks). */
function wire(transport) {
  transport.on('connect', ({ dtlsParameters }, callback, errback) => {
    rpc('connectTransport', transport.id, dtlsParameters).then(callback, errback);
  });
  transport.on('produce', ({ kind, rtpParameters }, callback, errback) => {
    rpc('createProducer', transport.id, kind, rtpParameters).then(
      (id) => callback({ id }),
      errback,
    );
  });
  return transport;
}

const state = { device: null, transport: null, consumers: [] };

async function join(room, peerId, direction) {
  const router = await rpc('createRouter', room);
  const device = new Device();
  await device.load({ routerRtpCapabilities: router.rtpCapabilities });
  const info = await rpc('createTransport', room, direction, peerId);
  const transport = wire(
    direction === 'send' ? device.createSendTransport(info) : device.createRecvTransport(info),
  );
  Object.assign(state, { device, transport });
  return { device, transport };
}

/** Sends the fake microphone and camera; resolves with the producer ids. */
async function send(room, peerId) {
  const { transport } = await join(room, peerId, 'send');
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
  const ids = {};
  for (const track of stream.getTracks()) {
    const producer = await transport.produce({ track });
    ids[track.kind] = producer.id;
  }
  return { transportId: transport.id, producers: ids };
}

/** Consumes the given producers (paused on the server until resumed); resolves with ids. */
async function receive(room, peerId, producerIds) {
  const { device, transport } = await join(room, peerId, 'recv');
  const consumers = {};
  for (const producerId of producerIds) {
    const info = await rpc('createConsumer', transport.id, producerId, device.rtpCapabilities);
    const consumer = await transport.consume(info);
    state.consumers.push(consumer);
    consumers[consumer.kind] = consumer.id;
  }
  return { transportId: transport.id, consumers };
}

/** What this browser received, per kind, from its inbound-rtp stats. */
async function received() {
  const totals = {};
  for (const consumer of state.consumers) {
    const stats = await consumer.getStats();
    let packets = 0;
    let frames = 0;
    stats.forEach((s) => {
      if (s.type === 'inbound-rtp') {
        packets += s.packetsReceived ?? 0;
        frames += s.framesDecoded ?? 0;
      }
    });
    totals[consumer.kind] = { packets, frames };
  }
  return totals;
}

/**
 * Sends one WebAudio microphone: `tone` a steady 440 Hz (someone talking, as far as the
 * encoder is concerned), else digital silence (a quiet seat); with `codecOptions` as
 * mediasoup-client's produce takes them (e.g. `{ opusDtx: true }`). Resolves with the producer id.
 */
async function sendAudio(room, peerId, { tone, codecOptions }) {
  const { transport } = await join(room, peerId, 'send');
  const context = new AudioContext();
  const source = context.createOscillator();
  const gain = context.createGain();
  gain.gain.value = tone ? 0.3 : 0;
  const out = context.createMediaStreamDestination();
  source.connect(gain).connect(out);
  source.start();
  const [track] = out.stream.getAudioTracks();
  const producer = await transport.produce({ track, codecOptions });
  state.producer = producer;
  return producer.id;
}

/** What the producer has sent so far (its outbound-rtp stats). */
async function sent() {
  let bytes = 0;
  let packets = 0;
  (await state.producer.getStats()).forEach((s) => {
    if (s.type === 'outbound-rtp') {
      bytes += s.bytesSent ?? 0;
      packets += s.packetsSent ?? 0;
    }
  });
  return { bytes, packets };
}

window.peer = { send, receive, received, sendAudio, sent };
window.peerReady = true;
