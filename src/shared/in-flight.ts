/**
 * Background work a component started without awaiting it (an event listener's follow-up),
 * and waits for when it closes. A failure goes to the component's handler, never to the
 * caller of `track`: a listener must not throw.
 */
export class InFlight {
  readonly #pending = new Set<Promise<void>>();

  track(work: Promise<void>, onError: (err: unknown) => void): void {
    const quiet = work.catch(onError);
    this.#pending.add(quiet);
    void quiet.finally(() => this.#pending.delete(quiet));
  }

  /** Resolves once nothing is in flight, including work started meanwhile. */
  async drain(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }
}
