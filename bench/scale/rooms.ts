/**
 * `rooms`: many distinct rooms touched on one node, an hour compressed into about a minute:
 * with the product's 5-minute idle time, 100,000 rooms an hour (28/s) keep about 8,300
 * cells loaded; here rooms are touched as fast as 64 workers go (1,000–3,000/s) and cells
 * unload after BENCH_ROOMS_IDLE_MS (2 s), for a ceiling of the same order. Resident memory
 * must stay bounded by idle unload: past the ceiling more rooms do not mean more memory.
 * The host (a CellHost on MariaDB + Redis, counter rooms) runs in a child process per size
 * (rooms-host.ts), so each size starts from scratch and its memory is the host's own.
 */
import { mariadbAvailable, redisAvailable } from '../../src/testing/backends.js';
import { startChild } from './child.js';
import type { ScaleDimension, ScaleFigures } from './dimension.js';

const IDLE_MS = Number(process.env.BENCH_ROOMS_IDLE_MS ?? 2_000);
const CONCURRENCY = Number(process.env.BENCH_ROOMS_CONCURRENCY ?? 64);

async function run(rooms: number): Promise<ScaleFigures> {
  if (!(await mariadbAvailable()) || !(await redisAvailable())) {
    throw new Error('needs MariaDB and Redis');
  }
  const { child } = await startChild('rooms-host.ts', {}, ['--expose-gc']);
  try {
    const result = await child.ask<ScaleFigures & { error?: string }>('run', {
      rooms,
      idleAfterMs: IDLE_MS,
      concurrency: CONCURRENCY,
    });
    if (result.error) throw new Error(result.error);
    const { type: _type, ...figures } = result as ScaleFigures & { type?: unknown };
    console.log(
      `  ${rooms} rooms: ${figures.touch_per_s!.toFixed(0)} touches/s, ` +
        `peak ${figures.loaded_cells_peak} cells loaded, RSS peak ${figures.rss_peak_mib!.toFixed(0)} MiB ` +
        `(+${figures.rss_growth_mib!.toFixed(0)}), ${figures.kib_per_loaded_cell!.toFixed(2)} KiB heap per loaded cell; ` +
        `live heap ${figures.heap_live_end_mib!.toFixed(0)} MiB at the end (${figures.heap_end_over_halfway!.toFixed(2)}× halfway); ` +
        `all unloaded ${figures.unload_s!.toFixed(1)} s after the last touch, RSS then ${figures.rss_end_mib!.toFixed(0)} MiB, ` +
        `${figures.retained_bytes_per_room!.toFixed(0)} bytes per room left`,
    );
    return figures;
  } finally {
    await child.close();
  }
}

export const rooms: ScaleDimension = {
  name: 'rooms',
  what: 'distinct rooms touched on one node with idle unload (compressed hour): memory, cold activation',
  unit: 'rooms touched',
  sizes: [1_000, 10_000, 100_000],
  plots: [
    {
      figure: 'rss_peak_mib',
      label: 'RSS peak (MiB)',
      with: [
        { figure: 'rss_growth_mib', label: 'RSS growth over the start' },
        { figure: 'heap_live_end_mib', label: 'live heap at the end' },
      ],
    },
    { figure: 'loaded_cells_peak', label: 'loaded cells (peak)' },
    {
      figure: 'cold_activation_p99_ms',
      label: 'first touch of a room, p99 (ms)',
      with: [{ figure: 'reactivation_p99_ms', label: 'unloaded room touched again' }],
    },
  ],
  run,
};
