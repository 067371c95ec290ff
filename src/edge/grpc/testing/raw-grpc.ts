/**
 * Test helper: one unary `room.v1.RoomService` call written by hand over HTTP/2, so a test can
 * send what grpc-js never would (no or odd `authorization` bytes, a deadline already spent).
 */
import { connect, constants } from 'node:http2';
import type { RpcName } from '../../../voice-room/api/commands.js';
import { roomServiceClient } from '../room-service.js';

export interface RawGrpcResult {
  /** `grpc-status` (a trailers-only answer carries it in the headers). */
  readonly code: number;
  readonly details: string;
  /** `x-rooms-reason`, when the server set one. */
  readonly reason: string | undefined;
}

/** Calls `method` on 127.0.0.1:`port` with `request` and exactly the extra `headers` given. */
export function rawGrpcCall(
  port: number,
  method: RpcName,
  request: object,
  headers: Record<string, string | string[]> = {},
): Promise<RawGrpcResult> {
  const serialize = roomServiceClient().service[method]!.requestSerialize;
  const message = serialize(request);
  const frame = Buffer.alloc(5);
  frame.writeUInt32BE(message.length, 1);
  return new Promise((resolve, reject) => {
    const session = connect(`http://127.0.0.1:${port}`);
    session.on('error', reject);
    const stream = session.request({
      [constants.HTTP2_HEADER_METHOD]: 'POST',
      [constants.HTTP2_HEADER_PATH]: `/room.v1.RoomService/${method}`,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...headers,
    });
    const seen: Record<string, unknown> = {};
    const keep = (h: Record<string, unknown>) => Object.assign(seen, h);
    stream.on('response', keep);
    stream.on('trailers', keep);
    stream.on('error', reject);
    stream.resume();
    stream.on('close', () => {
      session.close();
      const text = (key: string) => (typeof seen[key] === 'string' ? seen[key] : undefined);
      resolve({
        code: Number(text('grpc-status') ?? NaN),
        details: decodeURIComponent(text('grpc-message') ?? ''),
        reason: text('x-rooms-reason'),
      });
    });
    stream.end(Buffer.concat([frame, message]));
  });
}
