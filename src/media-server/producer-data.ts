/**
 * What a producer carries besides its media: the transport's `peer_id` and the caller's
 * `app_data` (e.g. the user id and mic session of a voice-room seat), both kept on the
 * mediasoup producer's own `appData` so that anything holding the producer (the registry,
 * the speaker observers) reads them the same way, and every event about it repeats them.
 */
import type { types } from 'mediasoup';
import type { MediaEventScope, ProducerEventFields } from './events.js';
import type { ProducerEntry } from './media-entries.js';

/** The caller's small flat string map (see `appData` in schemas.ts for its limits). */
export type ProducerAppData = Readonly<Record<string, string>>;

/**
 * The mediasoup `appData` of our producers. `appData` is camelCase, which no caller key
 * (`[a-z_]`) can be, but it is still kept apart from `peerId` rather than merged into it.
 */
export type StoredProducerData = {
  readonly peerId: string | null;
  readonly appData: ProducerAppData;
};

const EMPTY: ProducerAppData = Object.freeze({});

/** The caller's app data as stored, frozen (an empty object when none was given). */
export function storedProducerData(
  peerId: string | null,
  appData: ProducerAppData | undefined,
): StoredProducerData {
  // Object.fromEntries defines own properties: a key like `__proto__` stays plain data.
  const copy = appData ? Object.freeze(Object.fromEntries(Object.entries(appData))) : EMPTY;
  return { peerId, appData: copy };
}

export function peerOf(producer: types.Producer): string | null {
  const peer = producer.appData.peerId;
  return typeof peer === 'string' ? peer : null;
}

export function appDataOf(producer: types.Producer): ProducerAppData {
  const data = producer.appData.appData;
  return data !== null && typeof data === 'object' ? (data as ProducerAppData) : EMPTY;
}

/** The fields of every event about the producer. */
export function producerEventFields(
  scope: MediaEventScope,
  { producer, transportEntry }: ProducerEntry,
): ProducerEventFields {
  return {
    ...scope,
    transport_id: transportEntry.transport.id,
    producer_id: producer.id,
    kind: producer.kind,
    app_data: appDataOf(producer),
  };
}

/**
 * Calls `started` once, when the producer's first RTP packet arrives. The worker notifies a
 * score when a stream gets its first packet (and on changes after), paused or not: the
 * first non-empty score list is the first RTP. No polling: the notification is the signal.
 */
export function onFirstRtp(producer: types.Producer, started: () => void): void {
  const check = (score: readonly types.ProducerScore[]) => {
    if (score.length === 0 || producer.closed) return;
    producer.off('score', check);
    started();
  };
  producer.on('score', check);
  check(producer.score);
}
