/**
 * The admin inspection API's ports over this node's cell host (its loaded cells, read in
 * memory) and the SQL command log.
 */
import { sqlCommandLogReader } from '../adapters/sql/command-log-reader.js';
import type { SqlBackend } from '../adapters/sql/database.js';
import type { CellHost } from '../cell/host.js';
import type { AdminInspectionDeps } from '../edge/http/admin-inspection-routes.js';

export function wireAdminInspection(host: CellHost, sql: SqlBackend): AdminInspectionDeps {
  return {
    cells: {
      nodeId: host.nodeId,
      loadedCells: () =>
        host.loadedCells
          .filter((cell) => !cell.closed)
          .map((cell) => ({
            appCode: cell.key.appCode,
            roomId: cell.key.roomId,
            kind: cell.domain.kind,
            ownerNodeId: host.nodeId,
            version: cell.currentVersion,
            snapshotVersion: cell.snapshotVersion,
            leaseEpoch: cell.leaseEpoch,
            persisted: cell.isPersisted,
            queued: cell.queued,
            lastActivityMs: cell.lastActivityMs,
            ...cell.stats,
          })),
    },
    log: sqlCommandLogReader(sql.db),
  };
}
