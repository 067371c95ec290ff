/**
 * Test-only: a seat's audio and a listener of it through a node's `/ws`, as a client does
 * it: a sending transport and an Opus producer for a member on a seat, and a receiving
 * transport with a consumer of that producer.
 */
import assert from 'node:assert/strict';
import type { TestClient } from '../../../edge/ws/testing/ws-client.js';
import { opusRtpParameters } from '../../../media-server/testing/harness.js';

/** An ACK's data, asserting it succeeded. */
function data(ack: { code: number; message?: string; data: unknown }): Record<string, unknown> {
  assert.equal(ack.code, 0, ack.message);
  return ack.data as Record<string, unknown>;
}

/** Produces the seat holder's audio (the member took the seat already); the producer id. */
export async function produceSeatAudio(socket: TestClient, roomId: string): Promise<string> {
  const send = data(
    await socket.request('voice.transport.create', { room_id: roomId, direction: 'send' }),
  ).id;
  const produced = data(
    await socket.request('voice.produce.start', {
      room_id: roomId,
      transport_id: send,
      kind: 'audio',
      rtp_parameters: opusRtpParameters(12345678),
    }),
  );
  return produced.producer_id as string;
}

/** A receiving transport and a consumer of `producerId`; the transport's id. */
export async function consumeSeatAudio(
  socket: TestClient,
  roomId: string,
  producerId: string,
  rtpCapabilities: unknown,
): Promise<string> {
  const { id } = data(
    await socket.request('voice.transport.create', { room_id: roomId, direction: 'recv' }),
  );
  const consumer = data(
    await socket.request('voice.consume.start', {
      room_id: roomId,
      transport_id: id,
      producer_id: producerId,
      rtp_capabilities: rtpCapabilities,
    }),
  );
  assert.equal(consumer.producerId, producerId, 'the consumer names the seat’s producer');
  return id as string;
}
