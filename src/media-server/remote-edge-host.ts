/**
 * This server's side of an edge router it holds for a room whose origin is on another media
 * server of the cluster (that server's ./remote-edge.ts opened it): the edge's end of the
 * pipe (a PipeTransport, SRTP-protected, connected to the origin's end), and the pipe
 * producers that carry the origin's producers into it. A consumer on the edge consumes the
 * pipe producer of the origin producer it names, under the origin producer's id, so the
 * nodes see nothing new. Pipe producers report no events: the origin's producers do, on
 * their own server.
 */
import type { types } from 'mediasoup';
import type { RouterEntry } from './media-entries.js';
import type { MediaServerOptions } from './options.js';
import { storedProducerData, type ProducerAppData } from './producer-data.js';
import { errors } from '../shared/error-codes.js';

/** Where one end of a pipe receives RTP, and the SRTP keys it sends with. */
export interface PipeTuple {
  readonly ip: string;
  readonly port: number;
  readonly srtp_parameters: types.SrtpParameters;
}

/** A pipe's end on `router`, listening on the pipe address of these options. */
export async function openPipeEnd(
  router: types.Router,
  options: Pick<MediaServerOptions, 'listenIp' | 'announcedAddress' | 'rtcMinPort' | 'rtcMaxPort'> &
    Pick<MediaServerOptions, 'pipeListenIp' | 'pipeAnnouncedAddress'>,
): Promise<types.PipeTransport> {
  const ip = options.pipeListenIp ?? options.listenIp;
  const announcedAddress = options.pipeAnnouncedAddress ?? options.announcedAddress;
  return router.createPipeTransport({
    listenInfo: {
      protocol: 'udp',
      ip,
      ...(announcedAddress ? { announcedAddress } : {}),
      portRange: { min: options.rtcMinPort, max: options.rtcMaxPort },
    },
    enableSrtp: true,
  });
}

/** What the other end needs to send to this one. */
export function tupleOf(pipe: types.PipeTransport): PipeTuple {
  return {
    ip: pipe.tuple.localAddress ?? pipe.tuple.localIp,
    port: pipe.tuple.localPort,
    srtp_parameters: pipe.srtpParameters!,
  };
}

export async function connectPipe(pipe: types.PipeTransport, to: PipeTuple): Promise<void> {
  await pipe.connect({ ip: to.ip, port: to.port, srtpParameters: to.srtp_parameters });
}

/** An origin producer as the edge's server is told of it. */
export interface PipedProducer {
  readonly producer_id: string;
  readonly kind: types.MediaKind;
  readonly rtp_parameters: types.RtpParameters;
  readonly paused: boolean;
  readonly peer_id: string | null;
  readonly app_data: ProducerAppData;
}

/** The hosted edge `entry`, or not found. */
export function hostedEdge(entry: RouterEntry): RouterEntry & { pipeIn: types.PipeTransport } {
  if (!entry.originServer || !entry.pipeIn) throw errors.ROUTER_NOT_FOUND(entry.router.id);
  return entry as RouterEntry & { pipeIn: types.PipeTransport };
}

/** Makes the pipe producer of an origin producer on a hosted edge (again: the same one). */
export async function pipeIn(entry: RouterEntry, piped: PipedProducer): Promise<types.Producer> {
  const edge = hostedEdge(entry);
  const existing = edge.pipes.get(piped.producer_id);
  if (existing) return existing;
  const making = edge.pipeIn.produce({
    kind: piped.kind,
    rtpParameters: piped.rtp_parameters,
    paused: piped.paused,
    appData: storedProducerData(piped.peer_id, piped.app_data),
  });
  edge.pipes.set(piped.producer_id, making);
  try {
    const producer = await making;
    producer.observer.once('close', () => {
      if (edge.pipes.get(piped.producer_id) === making) edge.pipes.delete(piped.producer_id);
    });
    return producer;
  } catch (error) {
    if (edge.pipes.get(piped.producer_id) === making) edge.pipes.delete(piped.producer_id);
    throw error;
  }
}

/** Pauses, resumes or closes the pipe producer of an origin producer on a hosted edge. */
export async function pipeAction(
  entry: RouterEntry,
  producerId: string,
  action: 'pause' | 'resume' | 'close',
): Promise<void> {
  const pipe = hostedEdge(entry).pipes.get(producerId);
  if (!pipe) throw errors.PRODUCER_NOT_FOUND(producerId);
  const producer = await pipe;
  if (action === 'close') producer.close();
  else await producer[action]();
}
