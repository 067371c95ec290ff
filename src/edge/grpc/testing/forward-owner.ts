/**
 * Test-only: a RoomService owner in its own process (src/edge/grpc/forward-stream.int.test.ts
 * kills it). GetRoom answers `{ok: room_id}` at once, except room `hang`, which never answers.
 * Sends its port to the parent.
 */
import { startRoomServiceServer } from '../room-service.js';

const server = await startRoomServiceServer(
  {
    call: (_method, request) => {
      const roomId = (request as { room_id?: string }).room_id;
      return roomId === 'hang' ? new Promise(() => undefined) : Promise.resolve({ ok: roomId });
    },
  },
  { host: '127.0.0.1', port: 0, token: process.env.FORWARD_TEST_TOKEN ?? '', tls: null },
);
process.send?.(server.port);
