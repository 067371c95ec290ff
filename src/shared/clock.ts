/** Time source port: deciders never read the clock; the runtime passes `nowMs` in. */
export interface Clock {
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };
