/**
 * A media helper's change listeners. The helpers hold no framework state: their getters
 * return values that are replaced, never mutated, at a change, so a UI wrapping them (a Vue
 * `shallowRef`, a React store) re-reads them in its listener and compares by identity.
 */
export class ChangeListeners {
  private readonly listeners = new Set<() => void>();

  /** Calls `listener` after every change; returns the function that stops it. */
  add(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch (error) {
        // A UI's bug must not stop the media work that changed the state.
        console.error('a media change listener failed', error);
      }
    }
  }
}
