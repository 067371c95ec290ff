/**
 * Who is speaking in a room: one ActiveSpeakerObserver (the dominant speaker) and one
 * AudioLevelObserver (every audible producer's level) per router. Both feed the event bus
 * and keep the latest state so `GET /internal/v1/routers/:id/speakers` can answer at once.
 */
import type { types } from 'mediasoup';
import type { Logger } from 'pino';
import type { MediaEventBus } from './events.js';
import { appDataOf, peerOf, type ProducerAppData } from './producer-data.js';

/** The last known speaking state of one router. */
export interface SpeakerState {
  /** Producer the active-speaker observer picked last; null before anyone spoke. */
  readonly dominant: {
    producer_id: string;
    peer_id: string | null;
    app_data: ProducerAppData;
    at_ms: number;
  } | null;
  /** Levels of the last report (dBov, loudest first); empty after silence. */
  readonly volumes: readonly {
    producer_id: string;
    peer_id: string | null;
    app_data: ProducerAppData;
    volume: number;
  }[];
}

/** Observer intervals: fast enough for a speaking ring in the UI, cheap for the worker. */
const ACTIVE_SPEAKER_INTERVAL_MS = 300;
const AUDIO_LEVEL_INTERVAL_MS = 800;
const AUDIO_LEVEL_THRESHOLD_DBOV = -70;

export class RouterSpeakers {
  #state: SpeakerState = { dominant: null, volumes: [] };

  private constructor(
    private readonly activeSpeaker: types.ActiveSpeakerObserver,
    private readonly audioLevel: types.AudioLevelObserver,
  ) {}

  static async attach(
    router: types.Router,
    roomCode: string,
    bus: MediaEventBus,
    now: () => number,
  ): Promise<RouterSpeakers> {
    const activeSpeaker = await router.createActiveSpeakerObserver({
      interval: ACTIVE_SPEAKER_INTERVAL_MS,
    });
    const audioLevel = await router.createAudioLevelObserver({
      maxEntries: 16,
      threshold: AUDIO_LEVEL_THRESHOLD_DBOV,
      interval: AUDIO_LEVEL_INTERVAL_MS,
    });
    const speakers = new RouterSpeakers(activeSpeaker, audioLevel);
    const scope = { room_code: roomCode, router_id: router.id };
    activeSpeaker.on('dominantspeaker', ({ producer }) => {
      const who = { producer_id: producer.id, peer_id: peerOf(producer) };
      const app_data = appDataOf(producer);
      speakers.#state = { ...speakers.#state, dominant: { ...who, app_data, at_ms: now() } };
      bus.publish({ type: 'dominant_speaker', ...scope, ...who, app_data });
    });
    audioLevel.on('volumes', (list) => {
      const volumes = list.map(({ producer, volume }) => ({
        producer_id: producer.id,
        peer_id: peerOf(producer),
        app_data: appDataOf(producer),
        volume,
      }));
      speakers.#state = { ...speakers.#state, volumes };
      bus.publish({ type: 'audio_levels', ...scope, volumes });
    });
    audioLevel.on('silence', () => {
      speakers.#state = { ...speakers.#state, volumes: [] };
      bus.publish({ type: 'silence', ...scope });
    });
    return speakers;
  }

  get state(): SpeakerState {
    return this.#state;
  }

  /** Starts watching an audio producer (video producers are ignored). */
  async add(producer: types.Producer, logger: Logger): Promise<void> {
    if (producer.kind !== 'audio') return;
    try {
      await Promise.all([
        this.activeSpeaker.addProducer({ producerId: producer.id }),
        this.audioLevel.addProducer({ producerId: producer.id }),
      ]);
    } catch (error) {
      // The producer or router may close meanwhile; the speaking ring is not worth a failure.
      if (!producer.closed) logger.warn({ err: error, producer: producer.id }, 'speaker observer');
    }
  }

  /** Forgets a closed producer so a stale dominant speaker is not reported. */
  forget(producerId: string): void {
    const { dominant, volumes } = this.#state;
    this.#state = {
      dominant: dominant?.producer_id === producerId ? null : dominant,
      volumes: volumes.filter((v) => v.producer_id !== producerId),
    };
  }
}
