/**
 * The `/ws` protocol's types, made from the node's AsyncAPI document
 * (./generated-ws/, `npm run client:generate`): what each client event sends, what its ACK
 * answers and the reasons of its refusals, and the data of each pushed frame.
 */
import type { WsProtocol } from './generated-ws/ws-protocol.gen.js';

export type ClientEvents = WsProtocol['client'];
/** Every event a client may send (`room.subscribe`, `meeting.room.join`, …). */
export type ClientEventName = keyof ClientEvents;
/** What a client event sends as `data`. */
export type PayloadOf<E extends ClientEventName> = ClientEvents[E]['data'];
/** What its ACK answers as `data`. */
export type AckOf<E extends ClientEventName> = ClientEvents[E]['ack'];
/** The `reason` codes of its refused ACK. */
export type RefusalOf<E extends ClientEventName> = ClientEvents[E]['reason'];

export type ServerEvents = WsProtocol['server'];
/** Every event the node pushes (`meeting.chat`, `voice.mic.up`, `notification.new`, …). */
export type ServerEventName = keyof ServerEvents;
/** A pushed event's `data`. */
export type FrameDataOf<E extends ServerEventName> = ServerEvents[E];
