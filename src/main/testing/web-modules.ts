/**
 * Test-only: what the unit tests of the page's modules (web/src) share. The page's own
 * error classes live in DOM modules (web/src/api.ts, web/src/ws.ts) that Node does not
 * load; these have their shapes, which is all the modules look at (`status`, `reason`).
 */

/** The shape of web/src/api.ts's ApiError. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly reason: string,
  ) {
    super(message);
  }
}

/** The shape of web/src/ws.ts's WsError. */
export class WsError extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

/** A refused ACK of `reason`, as the page's socket rejects it. */
export const refused = (reason: string): Promise<never> =>
  Promise.reject(new WsError(`refused: ${reason}`, reason));

/** Lets the promise chains a step started run to their end (no timer fires meanwhile). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Loads a page module by a name the server's type check does not follow (the module is the
 * page's: DOM types, Vite's imports; web/'s vue-tsc checks it).
 */
export const loadPageModule = (name: string): Promise<unknown> =>
  import(`../../../web/src/${name}.ts`);
