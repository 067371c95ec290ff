/**
 * How a room page comes back after its socket drops (a network failure, a restarted node, a
 * node that died and another that now serves the socket): after every (re)open of the
 * socket the page's `restore` runs (follow the room again, fetch what was missed, make the
 * media again on the new socket); a transient failure of it (the room's owner moving to
 * another node, a timeout, a socket that dropped again) is retried with backoff while the
 * page stays. `state` is what the page shows: `reconnecting` from the drop until `restore`
 * has succeeded on a new socket.
 */
// Whether retrying may succeed: the SDK's one list (a REST outage, an `unavailable` refusal).
// By its file, not the package entry: this module is unit-tested under Node (src/main), where
// the entry's fetch client (DOM types) is not compiled.
import { isTransient } from '../../packages/client/src/transient.js';
import { ref } from 'vue';

/** What the recovery uses of the socket (./ws.ts's RealtimeClient). */
export interface RecoverySocket {
  /** How many times the socket opened. */
  readonly opens: number;
  readonly isOpen: boolean;
  onOpen(handler: () => void): () => void;
  onClose(handler: () => void): () => void;
}

export type RecoveryState = 'joining' | 'live' | 'reconnecting';

const MAX_DELAY_MS = 5_000;

export class Recovery {
  readonly state = ref<RecoveryState>('joining');
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly offs: (() => void)[] = [];

  /**
   * @param restore the page's way back; it handles the refusals it understands (the room
   *   ended, the user was removed) and throws the rest
   * @param onError a failure that retrying will not cure
   */
  constructor(
    private readonly ws: RecoverySocket,
    private readonly restore: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Runs `restore` now if the socket is open, and after every reopen. */
  start(): void {
    let wasOpen = false;
    this.offs.push(
      this.ws.onOpen(() => {
        wasOpen = true;
        void this.attempt(this.ws.opens, 0);
      }),
      // Hidden until the first join: a drop after it is what the page calls reconnecting.
      this.ws.onClose(() => {
        if (wasOpen && this.state.value === 'live') this.state.value = 'reconnecting';
      }),
    );
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const off of this.offs) off();
  }

  private async attempt(opened: number, failures: number): Promise<void> {
    // Dropped again meanwhile: the next open starts over.
    if (this.stopped || this.ws.opens !== opened || !this.ws.isOpen) return;
    try {
      await this.restore();
      if (this.ws.opens === opened && this.ws.isOpen) this.state.value = 'live';
    } catch (error) {
      if (this.stopped || this.ws.opens !== opened) return; // a newer socket starts over
      if (!isTransient(error)) {
        this.state.value = 'live';
        this.onError(error);
        return;
      }
      const delay = Math.min(MAX_DELAY_MS, 500 * 2 ** failures);
      this.timer = setTimeout(() => void this.attempt(opened, failures + 1), delay);
    }
  }
}
