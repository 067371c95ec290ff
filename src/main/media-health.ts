/**
 * Whether this node's meetings have media, for `/healthz`: the embedded media server's live
 * workers, or the remote media server's own `/healthz` (probed at most every few seconds,
 * so a health check never waits on the media server).
 */
export interface MediaHealthReport {
  readonly available: boolean;
  readonly mode: 'embedded' | 'remote' | 'none';
  /** Why media is unavailable, when it is. */
  readonly reason?: string;
}

export type MediaHealth = () => MediaHealthReport;

/** The embedded server: available while one of its workers is alive. */
export function embeddedMediaHealth(
  server: { readonly pool: { readonly slots: readonly { readonly alive: boolean }[] } } | null,
  reason: string,
): MediaHealth {
  return () => {
    if (!server) return { available: false, mode: 'none', reason };
    const alive = server.pool.slots.some((slot) => slot.alive);
    return alive
      ? { available: true, mode: 'embedded' }
      : { available: false, mode: 'embedded', reason: 'no mediasoup worker is alive' };
  };
}

/** A remote media server: the last answer of its `/healthz`, refreshed in the background. */
export function remoteMediaHealth(baseUrl: string, everyMs = 5_000): MediaHealth {
  let last: MediaHealthReport = { available: false, mode: 'remote', reason: 'not probed yet' };
  let probedAt = 0;
  let probing = false;
  const probe = async () => {
    probing = true;
    try {
      const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(1_000) });
      last = res.ok
        ? { available: true, mode: 'remote' }
        : { available: false, mode: 'remote', reason: `media server answered ${res.status}` };
    } catch (error) {
      const code = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      last = { available: false, mode: 'remote', reason: `media server unreachable (${code})` };
    } finally {
      probedAt = Date.now();
      probing = false;
    }
  };
  void probe(); // so the first health check already has an answer, most of the time
  return () => {
    if (!probing && Date.now() - probedAt >= everyMs) void probe();
    return last;
  };
}
