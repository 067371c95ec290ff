/** Test helpers that call hosts the way an edge does: locally, or forwarded once. */
import assert from 'node:assert/strict';
import type { CommandResult } from '../cell.js';
import type { CellHost } from '../host.js';
import type { CellKey } from '../lease.js';
import { counter, eventually } from './harness.js';
import type { CounterCommand, CounterState } from './counter-domain.js';

export function room(roomId: string, appCode = 'default'): CellKey {
  return { appCode, roomId };
}

/** Executes on `host`, which must be (or become) the owner. */
export async function runLocal(
  host: CellHost,
  key: CellKey,
  command: CounterCommand,
  requestId?: string,
): Promise<CommandResult> {
  const routed = await host.execute(counter, key, command, requestId ? { requestId } : {});
  assert.equal(routed.kind, 'local', `expected ${host.nodeId} to own ${key.roomId}`);
  return routed.kind === 'local' ? routed.value : (undefined as never);
}

/** Executes on any host, forwarding once to the owner as the gRPC edge will. */
export async function runAnywhere(
  hosts: readonly CellHost[],
  entry: CellHost,
  key: CellKey,
  command: CounterCommand,
  requestId?: string,
): Promise<CommandResult> {
  const routed = await entry.execute(counter, key, command, requestId ? { requestId } : {});
  if (routed.kind === 'local') return routed.value;
  const owner = hosts.find((h) => h.nodeId === routed.nodeId);
  assert.ok(owner, `unknown owner ${routed.nodeId}`);
  const forwarded = await owner.execute(counter, key, command, {
    forwarded: true,
    ...(requestId ? { requestId } : {}),
  });
  assert.equal(forwarded.kind, 'local');
  return forwarded.kind === 'local' ? forwarded.value : (undefined as never);
}

export async function stateOf(host: CellHost, key: CellKey): Promise<CounterState> {
  const routed = await host.query(counter, key, (state) => state);
  assert.equal(routed.kind, 'local');
  return routed.kind === 'local' ? routed.value : (undefined as never);
}

/** Retries until `host` owns the room (e.g. after the old owner's TTL), then executes. */
export function runOnceOwner(
  host: CellHost,
  key: CellKey,
  command: CounterCommand,
  requestId: string,
): Promise<CommandResult> {
  return eventually(async () => {
    const routed = await host.execute(counter, key, command, { requestId }).catch(() => undefined);
    return routed?.kind === 'local' ? routed.value : undefined;
  });
}
