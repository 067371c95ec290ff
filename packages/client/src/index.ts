/**
 * @echochat/client: a typed client of an EchoChat Rooms node, without a framework. The REST
 * API (./rest.ts, generated from the node's OpenAPI document), the `/ws` socket
 * (./realtime.ts) and a room's events without a gap across drops (./room-feed.ts);
 * docs/client.md shows them together.
 */
export { ApiError, RestClient, requestId } from './rest.js';
export type {
  OperationId,
  OptionsOf,
  ReasonOf,
  ReplyOf,
  RestOptions,
  TransportReason,
} from './rest.js';
export { RealtimeClient, RealtimeError, socketUrl } from './realtime.js';
export type {
  Frame,
  RealtimeOptions,
  SocketConstructor,
  SocketLike,
  SocketReason,
  SocketStatus,
} from './realtime.js';
export type {
  AckOf,
  ClientEventName,
  ClientEvents,
  FrameDataOf,
  PayloadOf,
  RefusalOf,
  ServerEventName,
  ServerEvents,
} from './protocol.js';
export { RoomFeed } from './room-feed.js';
export { isTransient } from './transient.js';
export type { RoomFeedOptions, RoomFrame, RoomFrameMeta } from './room-feed.js';
export type * from './generated/types.gen.js';
