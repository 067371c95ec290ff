/**
 * Where a room's listeners go. A router's load is what its receiving transports carry: per
 * transport its consumers, at least 1, so a listener counts from its transport's creation
 * (listeners joining together spread before any of them consumes), and from its placement
 * until then (./room-routers.ts `routerForListener`). A new listener goes to
 * the room's least loaded router under the consumer budget; when every router is at the
 * budget, the room needs a new edge router. The load follows each consumer and transport as
 * it opens and closes (the registry calls the functions below).
 */
import type { RouterEntry, TransportEntry } from './media-entries.js';

/** What placement reads of a router, on this server or another. */
export interface Placeable {
  readonly closing?: unknown;
  readonly load: number;
}

/** The room's router with room for one more listener (least loaded; origin on a tie), or null. */
export function placeListener<R extends Placeable>(
  routers: readonly R[],
  budget: number,
): R | null {
  let best: R | null = null;
  for (const entry of routers) {
    if (entry.closing || entry.load >= budget) continue;
    if (!best || entry.load < best.load) best = entry;
  }
  return best;
}

/** What a transport adds to its router's load: its consumers, and at least 1 if receiving. */
function weightOf(transport: TransportEntry): number {
  return transport.direction === 'recv' ? Math.max(1, transport.consumers) : transport.consumers;
}

function reweigh(transport: TransportEntry): void {
  const weight = weightOf(transport);
  transport.routerEntry.load += weight - transport.weight;
  transport.weight = weight;
}

export function transportOpened(transport: TransportEntry): void {
  transport.routerEntry.transports.add(transport);
  reweigh(transport);
}

export function consumerOpened(transport: TransportEntry): void {
  transport.consumers++;
  if (transport.routerEntry.transports.has(transport)) reweigh(transport);
}

export function consumerClosed(transport: TransportEntry): void {
  transport.consumers--;
  if (transport.routerEntry.transports.has(transport)) reweigh(transport);
}

/** The transport is gone: its load with it (its consumers' closes come after, or never). */
export function transportClosed(transport: TransportEntry): void {
  const router = transport.routerEntry;
  router.transports.delete(transport);
  router.load -= transport.weight;
  transport.weight = 0;
}

/** Whether an edge router has no one left on it (its linger starts). */
export function isIdleEdge(entry: RouterEntry): boolean {
  return entry.role === 'edge' && entry.transports.size === 0 && !entry.closing;
}
