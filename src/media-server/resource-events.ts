/**
 * What each transport, producer and consumer of the media registry reports on the event
 * bus while it lives, and its close exactly once, with why it closed: the reason set when
 * we closed it ourselves, else what closed it (its router, transport or producer), or
 * `worker_died` when its worker died.
 */
import type { types } from 'mediasoup';
import type {
  CloseReason,
  MediaEventBus,
  MediaEventScope,
  TransportEventFields,
} from './events.js';
import type { ConsumerEntry, ProducerEntry, RouterEntry, TransportEntry } from './media-entries.js';
import { onFirstRtp, producerEventFields } from './producer-data.js';

export function eventScope(entry: TransportEntry): MediaEventScope {
  const { routerEntry, peerId } = entry;
  return { room_code: routerEntry.roomCode, router_id: routerEntry.router.id, peer_id: peerId };
}

/** Why a resource closed that we did not close ourselves. */
function cause(routerEntry: RouterEntry, event: CloseReason): CloseReason {
  return routerEntry.worker.died ? 'worker_died' : event;
}

/** `forget` drops the transport from the registry when it closes, before the report. */
export function watchTransport(
  entry: TransportEntry,
  bus: MediaEventBus,
  forget: () => void,
): void {
  const { transport } = entry;
  const scope = (): TransportEventFields => ({
    ...eventScope(entry),
    transport_id: transport.id,
    direction: entry.direction,
  });
  if (transport.type === 'webrtc') {
    let connected = false;
    transport.on('icestatechange', (state) => {
      if (state === 'disconnected') {
        connected = false;
        bus.publish({ type: 'ice_disconnected', ...scope() });
      } else if ((state === 'connected' || state === 'completed') && !connected) {
        connected = true;
        bus.publish({ type: 'ice_connected', ...scope() });
      }
    });
    transport.on('dtlsstatechange', (state) => {
      if (state === 'failed') bus.publish({ type: 'dtls_failed', ...scope() });
    });
  }
  const common: types.Transport = transport;
  common.on('routerclose', () => {
    entry.closing ??= cause(entry.routerEntry, 'router_closed');
  });
  common.observer.once('close', () => {
    forget();
    const reason = entry.closing ?? cause(entry.routerEntry, 'router_closed');
    bus.publish({ type: 'transport_closed', ...scope(), reason });
  });
}

/** `forget` drops the producer from the registry when it closes, before the report. */
export function watchProducer(entry: ProducerEntry, bus: MediaEventBus, forget: () => void): void {
  const { producer, transportEntry } = entry;
  const body = () => producerEventFields(eventScope(transportEntry), entry);
  onFirstRtp(producer, () => bus.publish({ type: 'producer_rtp_started', ...body() }));
  producer.observer.on('pause', () => bus.publish({ type: 'producer_paused', ...body() }));
  producer.observer.on('resume', () => bus.publish({ type: 'producer_resumed', ...body() }));
  producer.on('transportclose', () => {
    entry.closing ??= cause(transportEntry.routerEntry, 'transport_closed');
  });
  producer.observer.once('close', () => {
    forget();
    transportEntry.routerEntry.speakers.forget(producer.id);
    const reason = entry.closing ?? cause(transportEntry.routerEntry, 'transport_closed');
    bus.publish({ type: 'producer_closed', ...body(), reason });
  });
}

/** `forget` drops the consumer from the registry when it closes, before the report. */
export function watchConsumer(entry: ConsumerEntry, bus: MediaEventBus, forget: () => void): void {
  const { consumer, transportEntry } = entry;
  consumer.on('transportclose', () => {
    entry.closing ??= cause(transportEntry.routerEntry, 'transport_closed');
  });
  consumer.on('producerclose', () => {
    entry.closing ??= cause(transportEntry.routerEntry, 'producer_closed');
  });
  consumer.observer.once('close', () => {
    forget();
    bus.publish({
      type: 'consumer_closed',
      ...eventScope(transportEntry),
      transport_id: transportEntry.transport.id,
      consumer_id: consumer.id,
      producer_id: entry.producerId,
      reason: entry.closing ?? cause(transportEntry.routerEntry, 'transport_closed'),
    });
  });
}
