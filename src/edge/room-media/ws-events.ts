/**
 * The media events every room kind's signalling takes, as declarations for the `/ws` hub
 * (../ws/ws-declarations.ts), under the kind's names (`meeting.transport.create`,
 * `voice.transport.create`, …). Payloads are the kind's ./schemas.ts ones (the hub parses
 * them: ./media-handlers.ts gets them parsed); the ACKs are what the handlers return, typed
 * by these schemas.
 */
import { z } from 'zod';
import type {
  ConsumerInfo,
  PlainTransportInfo,
  TransportInfo,
} from '../../media-cluster/media-orchestrator.js';
import { Empty, wsEvent, type ErrorName } from '../ws/ws-declarations.js';
import type { MediaPayloads } from './schemas.js';

/** A mediasoup object (ICE / DTLS / RTP parameters), passed through as the media server made it. */
const mediaJson = z.record(z.string(), z.unknown());

export const TransportAck = z
  .strictObject({
    id: z.string(),
    iceParameters: mediaJson,
    iceCandidates: z.array(mediaJson).readonly(),
    dtlsParameters: mediaJson,
    iceServers: z
      .array(
        z.strictObject({
          urls: z.array(z.string()).readonly(),
          username: z.string(),
          credential: z.string(),
        }),
      )
      .readonly()
      .describe(
        'TURN servers with time-limited credentials (empty: none configured); pass as ' +
          'createSendTransport / createRecvTransport’s iceServers',
      ),
  })
  .describe('For mediasoup-client’s Device.createSendTransport / createRecvTransport');

export const PlainTransportAck = z
  .strictObject({
    id: z.string(),
    ip: z.string().describe('The media server’s loopback address'),
    port: z.number().int().describe('Where to send RTP (send), or whence it comes (recv)'),
  })
  .describe(
    'A plain RTP transport (rtcp-mux, no ICE, no DTLS): a send transport takes its sender ' +
      'from the first packet; a recv one sends where …transport.plain.connect names',
  );

export const ConsumerAck = z
  .strictObject({
    id: z.string(),
    producerId: z.string(),
    kind: z.enum(['audio', 'video']),
    rtpParameters: mediaJson,
  })
  .describe('For mediasoup-client’s Transport.consume (the consumer starts paused)');

export const ProducerAck = z.strictObject({ producer_id: z.string() });

// The declared ACKs are what the media server's answers are (checked here, at compile time).
const _transport: z.input<typeof TransportAck> = {} as TransportInfo & { iceServers: [] };
const _consumer: z.input<typeof ConsumerAck> = {} as ConsumerInfo;
const _plain: z.input<typeof PlainTransportAck> = {} as PlainTransportInfo;
void [_transport, _consumer, _plain];

/** What any media event may answer once the kind let the caller in. */
const MEDIA_REASONS = [
  'MEDIA_RESOURCE_NOT_FOUND',
  'MEDIA_SERVER_ERROR',
  'MEDIA_ORCHESTRATOR_ERROR',
  'MEDIA_STATE_UNAVAILABLE',
] as const satisfies readonly ErrorName[];
/** …and what a creation may answer besides (caps, ./media-admission.ts). */
const CREATE_REASONS = [
  ...MEDIA_REASONS,
  'MEDIA_USER_LIMIT',
  'MEDIA_SOCKET_LIMIT',
] as const satisfies readonly ErrorName[];

/** The kind's names and refusals around the shared handlers. */
export interface MediaEventsOf {
  /** `meeting` or `voice`. */
  readonly prefix: string;
  readonly payloads: MediaPayloads;
  /** The kind's "may this user use media in this room" refusals (every event). */
  readonly access: readonly string[];
  /** What a transport request of a socket that does not follow the room answers. */
  readonly notJoined: string;
  /** The kind's "may this user produce this" refusals. */
  readonly produce: readonly string[];
}

/** The media events of a kind, declared. */
export function mediaWsEvents(kind: MediaEventsOf) {
  const { prefix, payloads, access } = kind;
  return {
    transportCreate: wsEvent({
      event: `${prefix}.transport.create`,
      summary: 'Create a WebRTC transport (send or recv) on the room’s media server',
      payload: payloads.TransportCreate,
      ack: TransportAck,
      reasons: [...access, kind.notJoined, ...CREATE_REASONS],
    }),
    transportConnect: wsEvent({
      event: `${prefix}.transport.connect`,
      summary: 'Connect one of the caller’s transports (its DTLS parameters)',
      payload: payloads.TransportConnect,
      ack: Empty,
      reasons: [...access, ...MEDIA_REASONS],
    }),
    plainTransportCreate: wsEvent({
      event: `${prefix}.transport.plain.create`,
      summary:
        'Create a plain RTP transport (send or recv) on the media server’s loopback, for a ' +
        'client on that host (load tests); only where ROOMS_MEDIA_PLAIN_RTP is on',
      payload: payloads.TransportCreate,
      ack: PlainTransportAck,
      reasons: ['MEDIA_PLAIN_RTP_OFF', ...access, kind.notJoined, ...CREATE_REASONS],
    }),
    plainTransportConnect: wsEvent({
      event: `${prefix}.transport.plain.connect`,
      summary: 'Where one of the caller’s plain recv transports sends (a loopback ip and port)',
      payload: payloads.PlainTransportConnect,
      ack: Empty,
      reasons: ['MEDIA_PLAIN_RTP_OFF', ...access, 'MEDIA_WRONG_DIRECTION', ...MEDIA_REASONS],
    }),
    produceStart: wsEvent({
      event: `${prefix}.produce.start`,
      summary: 'Produce a track on the caller’s send transport; the room hears of it',
      payload: payloads.ProduceStart,
      ack: ProducerAck,
      reasons: [...access, ...kind.produce, 'MEDIA_WRONG_DIRECTION', ...CREATE_REASONS],
    }),
    consumeStart: wsEvent({
      event: `${prefix}.consume.start`,
      summary: 'Consume a live producer of the room on the caller’s recv transport (paused)',
      payload: payloads.ConsumeStart,
      ack: ConsumerAck,
      reasons: [...access, 'MEDIA_WRONG_DIRECTION', ...CREATE_REASONS],
    }),
    producerClose: wsEvent({
      event: `${prefix}.producer.close`,
      summary: 'Close one of the caller’s producers (any other id: already closed, `{}`)',
      payload: payloads.ProducerClose,
      ack: Empty,
      reasons: [...access, ...MEDIA_REASONS],
    }),
    consumeResume: wsEvent({
      event: `${prefix}.consume.resume`,
      summary: 'Resume one of the caller’s consumers once its track is mounted',
      payload: payloads.ConsumeResume,
      ack: Empty,
      reasons: [...access, ...MEDIA_REASONS],
    }),
  };
}

/** The S→C `…producer.new` data: a producer of the room opened or closed. */
export function producerNewData<R extends string, U extends z.ZodType>(roomField: R, userId: U) {
  return z.strictObject({
    ...({ [roomField]: z.string() } as Record<R, z.ZodString>),
    user_id: userId,
    producer_id: z.string(),
    kind: z.enum(['audio', 'video']),
    closed: z.boolean().describe('true: the producer closed; drop its consumers'),
  });
}
