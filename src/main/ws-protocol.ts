/**
 * Everything a node puts on `/ws`, declared: the hub's own events, each room kind's events
 * and frames, and the notifications. The hub registers the events from these very
 * declarations (each part registers its own), and the AsyncAPI document at
 * `/docs/asyncapi.json` is made from this list (src/edge/ws/asyncapi.ts).
 */
import { hubProtocol } from '../edge/ws/hub-events.js';
import type { WsProtocol } from '../edge/ws/ws-declarations.js';
import { meetingProtocol } from '../meeting/signalling/ws-protocol.js';
import { notificationProtocol } from '../notifications/ws-frames.js';
import { voiceProtocol } from '../voice-room/signalling/ws-protocol.js';

export const nodeWsProtocol: readonly WsProtocol[] = [
  hubProtocol,
  meetingProtocol,
  voiceProtocol,
  notificationProtocol,
];
