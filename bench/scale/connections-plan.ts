/**
 * The connections dimension's plan and arithmetic, pure so they are unit-tested: which
 * rooms each socket follows, and the figures computed from the node's own measurements.
 */

/** Voice rooms for `sockets` sockets: about 40 followers per room (1–3 rooms each). */
export function roomCountFor(sockets: number): number {
  return Math.max(3, Math.ceil(sockets / 20));
}

/** The user id of socket `index` (a JWT `sub`: a decimal id from 1). */
export function userIdOf(index: number): string {
  return String(index + 1);
}

/** The rooms socket `index` follows: 1, 2 or 3 in turn, each a different room. */
export function roomsOf(index: number, roomCount: number): string[] {
  const follows = 1 + (index % 3);
  // A stride coprime with most room counts spreads one user's rooms apart.
  const stride = Math.max(1, Math.floor(roomCount / 3));
  const rooms = new Set<string>();
  for (let j = 0; j < follows; j++) rooms.add(`scale-${(index + j * stride) % roomCount}`);
  return [...rooms];
}

/** What `process.memoryUsage()` says, the part the figures use. */
export interface MemorySample {
  readonly rss: number;
  readonly heapUsed: number;
  /** Memory of C++ objects bound to JS ones (Buffers among them). */
  readonly external: number;
}

/**
 * KiB per connection between two samples, over n: the growth of RSS, of the live JS heap
 * plus external memory, and the larger of the two. Each alone can understate: RSS when the
 * heap grows into pages it already held (start-up left plenty), the heap because it leaves
 * out native allocations (a TCP handle's). The larger one is the figure held to the goal.
 */
export function kibPerConnection(
  before: MemorySample,
  after: MemorySample,
  connections: number,
): { rss: number; heap: number; figure: number } {
  const per = (bytes: number) => bytes / 1024 / Math.max(1, connections);
  const rss = per(after.rss - before.rss);
  const heap = per(after.heapUsed + after.external - before.heapUsed - before.external);
  return { rss, heap, figure: Math.max(rss, heap) };
}

/**
 * The hub's CPU for one ping round per 1,000 sockets (ms): the CPU of an idle window with
 * the sockets open, less the same window's CPU with none (the node's other timers), over
 * the rounds the window held. Never below 0 (noise can make the difference negative).
 */
export function pingCpuMsPer1k(options: {
  readonly cpuMs: number;
  readonly baselineCpuMs: number;
  readonly windowMs: number;
  readonly pingIntervalMs: number;
  readonly sockets: number;
}): number {
  const rounds = options.windowMs / options.pingIntervalMs;
  const extra = Math.max(0, options.cpuMs - options.baselineCpuMs);
  return extra / rounds / (Math.max(1, options.sockets) / 1000);
}

/** The share of one core (%) that keep-alive costs `sockets` sockets at `intervalMs`. */
export function keepAliveCpuPercent(msPer1k: number, sockets: number, intervalMs: number): number {
  return ((msPer1k * (sockets / 1000)) / intervalMs) * 100;
}
