import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hasControlCharacters, hasLoneSurrogate } from './text.js';

describe('display text checks', () => {
  it('control characters: C0, DEL and C1, anywhere', () => {
    for (const bad of ['a\nb', '\u0000', 'tab\there', 'x\u007f', 'x\u0085', '\u009f']) {
      assert.ok(hasControlCharacters(bad), JSON.stringify(bad));
    }
    for (const good of ['', 'Friday night', 'Café 中文 😀', '\u00a0nbsp', 'zero\u200bwidth']) {
      assert.ok(!hasControlCharacters(good), JSON.stringify(good));
    }
  });

  it('lone surrogates, high or low, at either end or inside; pairs are fine', () => {
    for (const bad of ['\ud800', 'a\udc00', 'x\ud83d', '\ude00x', '\ud83dx\ude00', '😀\ud83d']) {
      assert.ok(hasLoneSurrogate(bad), JSON.stringify(bad));
    }
    for (const good of ['', 'plain', '😀', '\ud83d\ude00 party', '𝄞 music']) {
      assert.ok(!hasLoneSurrogate(good), JSON.stringify(good));
    }
  });
});
