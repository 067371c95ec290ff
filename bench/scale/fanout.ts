/**
 * Scale dimension `fanout`: one room followed by N sockets; the highest sustained event
 * rate (every frame delivered, no client dropped, commit-to-client p99 under 100 ms) of
 * ours against a bare `ws` broadcast of the same frames to the same number of clients,
 * interleaved step by step (bench/fanout-phase.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { mariadbAvailable, redisAvailable } from '../../src/testing/backends.js';
import { highestSustained, startClients } from '../fanout-phase.js';
import { openBareBroadcast, openStack } from '../fanout-stack.js';
import type { ScaleDimension } from './dimension.js';

const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? 3);

export const fanoutDimension: ScaleDimension = {
  name: 'fanout',
  what: 'one room to N sockets: highest sustained frames/s, ours and a bare ws broadcast',
  unit: 'sockets',
  sizes: [500, 2_000, 5_000],
  plots: [
    {
      figure: 'frames_per_s',
      label: 'sustained frames/s',
      with: [{ figure: 'bare_frames_per_s', label: 'bare ws broadcast' }],
    },
    { figure: 'p99_ms', label: 'commit → client p99 (ms) at the sustained rate' },
  ],
  async run(sockets) {
    const cluster = (await mariadbAvailable()) && (await redisAvailable());
    const stack = await openStack(cluster, `scale-${sockets}`);
    const bare = await openBareBroadcast(await stack.sampleFrame());
    const children: ChildProcess[] = [];
    try {
      const ours = await startClients(stack.wsUrl, sockets, stack.room.roomId);
      children.push(ours.child);
      const baseline = await startClients(bare.wsUrl, sockets, stack.room.roomId);
      children.push(baseline.child);
      if (ours.failed > 0 || baseline.failed > 0) {
        throw new Error(`clients failed to connect: ours ${ours.failed}, bare ${baseline.failed}`);
      }
      // Start where both surely keep up: about 10,000 frames/s.
      const start = Math.max(1, Math.round(10_000 / sockets));
      const [top, topBare] = await highestSustained(
        [
          { target: stack, child: ours.child },
          { target: bare, child: baseline.child },
        ],
        sockets,
        start,
        STEP_SECONDS,
      );
      return {
        frames_per_s: top!.rate * sockets,
        bare_frames_per_s: topBare!.rate * sockets,
        ratio_vs_bare: topBare!.rate > 0 ? top!.rate / topBare!.rate : NaN,
        p99_ms: top!.result?.p99Ms ?? NaN,
        bare_p99_ms: topBare!.result?.p99Ms ?? NaN,
      };
    } finally {
      for (const child of children) child.send({ type: 'exit' });
      await bare.close();
      await stack.close();
    }
  },
};
