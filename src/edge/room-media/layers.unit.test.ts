import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { layerForWidth } from './layers.js';

describe('the layer a tile needs', () => {
  it('is the smallest layer at least as wide as the tile, else the largest', () => {
    assert.deepEqual([1, 320, 321, 640, 641, 4000].map(layerForWidth), [0, 0, 1, 1, 2, 2]);
  });
});
