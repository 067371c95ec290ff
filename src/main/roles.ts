/**
 * `ROOMS_ROLES`: which parts of the one binary a node runs. `edge` serves REST, `/ws` and the
 * web client; `cells` owns rooms (leases, timers, sweeper) and serves the gRPC RoomService;
 * `relay` delivers the outbox (webhooks) and runs the retention and janitor sweeps; `media`
 * runs the embedded media server. Every node keeps /healthz, /readyz, /metrics and the admin
 * node API whatever its roles.
 */
import { z } from 'zod';

export const ROLES = ['edge', 'cells', 'relay', 'media'] as const;
export type Role = (typeof ROLES)[number];

/** Which roles a node runs (all four by default). */
export type NodeRoles = { readonly [R in Role]: boolean };

export const ALL_ROLES: NodeRoles = { edge: true, cells: true, relay: true, media: true };

/** The comma list of `ROOMS_ROLES`; an unknown or empty entry is refused, named. */
export const rolesVariable = z.string().transform((value, ctx): NodeRoles => {
  const entries = value.split(',').map((entry) => entry.trim());
  const bad = entries.filter((entry) => !(ROLES as readonly string[]).includes(entry));
  if (bad.length > 0) {
    const named = bad.map((entry) => JSON.stringify(entry)).join(', ');
    ctx.addIssue({
      code: 'custom',
      message: `unknown role ${named} in ${JSON.stringify(value)}: a comma list of ${ROLES.join(', ')}`,
    });
    return z.NEVER;
  }
  return Object.fromEntries(ROLES.map((role) => [role, entries.includes(role)])) as NodeRoles;
});

/** The environment the role rules look at (already valid one by one). */
interface RoleEnv {
  readonly ROOMS_ROLES: NodeRoles;
  readonly ROOMS_DB_URL: string;
  readonly ROOMS_REDIS_URL?: string | undefined;
  readonly ROOMS_CELLS_ADDR?: string | undefined;
}

/** Role sets that cannot work are refused at start rather than failing every request later. */
export function roleRules(e: RoleEnv, ctx: z.RefinementCtx): void {
  const roles = e.ROOMS_ROLES;
  const issue = (path: string, message: string) =>
    ctx.addIssue({ code: 'custom', path: [path], message });
  const listed = ROLES.filter((role) => roles[role]).join(',');
  // (An invalid URL is reported on ROOMS_DB_URL alone.)
  const sqlite = !/^[a-z]+:\/\//i.test(e.ROOMS_DB_URL) || /^sqlite:\/\//i.test(e.ROOMS_DB_URL);
  if (!roles.cells && sqlite) {
    issue(
      'ROOMS_ROLES',
      `"${listed}" without cells needs the cluster backend (a mysql:// ROOMS_DB_URL): on embedded SQLite no other node could own a room`,
    );
  }
  if (roles.edge && !roles.cells && !e.ROOMS_REDIS_URL) {
    issue(
      'ROOMS_ROLES',
      `"${listed}" (an edge without cells) needs ROOMS_REDIS_URL: it finds the rooms' owners and their frames there`,
    );
  }
  if (e.ROOMS_CELLS_ADDR && roles.cells) {
    issue(
      'ROOMS_CELLS_ADDR',
      'only for a node without the cells role (a node with cells forwards to owners itself)',
    );
  }
  if (e.ROOMS_CELLS_ADDR && !roles.edge) {
    issue('ROOMS_CELLS_ADDR', 'only for an edge node (it is where its commands go)');
  }
}
