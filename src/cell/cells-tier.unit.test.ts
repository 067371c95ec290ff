/**
 * Where an edge without cells sends a room's call: the configured load balancer, else the
 * owner by its lease, else a live cells node; never an owner that is not registered.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryLeaseManager } from '../adapters/memory/memory-lease.js';
import { MemoryNodeRegistry } from '../adapters/memory/memory-node-registry.js';
import { AppError } from '../shared/errors.js';
import { cellsTier } from './cells-tier.js';
import { routeKey } from './lease.js';

const TTL = 60_000;
const room = { appCode: 'default', roomId: 'r1' };

function setup(fixedAddr: string | null = null, random = () => 0) {
  const clock = { nowMs: () => 1_000 };
  const lease = new MemoryLeaseManager({ clock });
  const registry = new MemoryNodeRegistry({ clock });
  return { lease, registry, tier: cellsTier({ fixedAddr, lease, registry, random }) };
}

void describe('cellsTier', () => {
  void it("sends a room's call to its owner's advertise address", async () => {
    const { lease, registry, tier } = setup();
    await registry.register('cells-a', '10.0.0.1:9090', TTL);
    await registry.register('cells-b', '10.0.0.2:9090', TTL);
    await lease.ensureOwner(routeKey(room), 'cells-b', TTL);
    assert.equal(await tier.addressFor(room), '10.0.0.2:9090');
  });

  void it('sends a room nobody owns, or a call naming no room, to a live cells node', async () => {
    const { registry, tier } = setup(null, () => 0.99);
    await registry.register('cells-a', '10.0.0.1:9090', TTL);
    await registry.register('cells-b', '10.0.0.2:9090', TTL);
    const live = ['10.0.0.1:9090', '10.0.0.2:9090'];
    assert.ok(live.includes(await tier.addressFor(room)));
    assert.ok(live.includes(await tier.addressFor(null)));
  });

  void it('does not send to an owner that is no longer registered', async () => {
    const { lease, registry, tier } = setup();
    await registry.register('cells-a', '10.0.0.1:9090', TTL);
    await lease.ensureOwner(routeKey(room), 'cells-gone', TTL);
    assert.equal(await tier.addressFor(room), '10.0.0.1:9090');
  });

  void it('answers unavailable (retryable) when no cells node is registered', async () => {
    const { tier } = setup();
    await assert.rejects(
      tier.addressFor(room),
      (error: unknown) =>
        error instanceof AppError &&
        error.code === 'OWNER_UNREACHABLE' &&
        error.kind === 'unavailable',
    );
  });

  void it('sends everything to ROOMS_CELLS_ADDR when set (that node forwards to the owner)', async () => {
    const { lease, registry, tier } = setup('cells-lb.internal:9090');
    await registry.register('cells-a', '10.0.0.1:9090', TTL);
    await lease.ensureOwner(routeKey(room), 'cells-a', TTL);
    assert.equal(await tier.addressFor(room), 'cells-lb.internal:9090');
    assert.equal(await tier.addressFor(null), 'cells-lb.internal:9090');
  });
});
