/** Which webhook destinations are refused, as an attacker would try to reach inside. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DestinationPolicy, refusedMessage } from './destinations.js';

void describe('webhook destination policy', () => {
  const policy = new DestinationPolicy();

  void it('refuses every non-global address, however it is spelled', () => {
    const cases: [string, string][] = [
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['0.0.0.0', 'unspecified'],
      ['10.0.0.1', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['100.64.0.1', 'private'],
      ['169.254.169.254', 'link-local'],
      ['224.0.0.1', 'multicast'],
      ['255.255.255.255', 'reserved'],
      ['::1', 'loopback'],
      ['::', 'unspecified'],
      ['fe80::1', 'link-local'],
      ['fc00::1', 'unique-local'],
      ['fd12:3456::1', 'unique-local'],
      ['ff02::1', 'multicast'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['::ffff:a9fe:a9fe', 'link-local'],
      ['::ffff:10.1.2.3', 'private'],
      ['64:ff9b::a00:1', 'private'], // NAT64 of 10.0.0.1
      ['2002:7f00:1::', 'loopback'], // 6to4 of 127.0.0.1
      ['::127.0.0.1', 'reserved'], // IPv4-compatible
    ];
    for (const [address, reason] of cases) {
      assert.equal(policy.refusal(address), reason, address);
    }
  });

  void it('allows global addresses, including those just outside the private ranges', () => {
    for (const address of [
      '93.184.216.34',
      '8.8.8.8',
      '172.32.0.1',
      '172.15.255.255',
      '100.128.0.1',
      '11.0.0.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
    ]) {
      assert.equal(policy.refusal(address), null, address);
    }
  });

  void it('checks IP literals in URLs, in every notation the URL parser accepts', () => {
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://2130706433/', // 127.0.0.1 as one number
      'http://0x7f.1/',
      'http://0/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'https://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1:9/',
    ]) {
      assert.match(policy.refuseLiteral(new URL(url)) ?? 'allowed', /^destination refused/, url);
    }
    // Names are checked when resolved, at connect time.
    assert.equal(policy.refuseLiteral(new URL('https://hooks.example.com/x')), null);
    assert.equal(policy.refuseLiteral(new URL('http://localhost/')), null);
    assert.equal(
      policy.refuseLiteral(new URL('http://127.0.0.1/')),
      refusedMessage('loopback'),
      'the message names the kind of address, not the address',
    );
  });

  void it('opens exactly what ROOMS_WEBHOOK_ALLOW_PRIVATE lists: addresses, CIDRs, host names', () => {
    const open = new DestinationPolicy(['127.0.0.1', '10.20.0.0/16', 'fd00::/8', 'Hooks.Internal']);
    assert.equal(open.refusal('127.0.0.1'), null);
    assert.equal(open.refusal('::ffff:127.0.0.1'), null);
    assert.equal(open.refusal('127.0.0.2'), 'loopback');
    assert.equal(open.refusal('::1'), 'loopback');
    assert.equal(open.refusal('10.20.3.4'), null);
    assert.equal(open.refusal('10.21.0.1'), 'private');
    assert.equal(open.refusal('fd00::5'), null);
    assert.equal(open.refusal('169.254.169.254'), 'link-local');
    // A listed host name may resolve to anything; other names may not.
    assert.equal(open.refusal('10.99.0.1', 'hooks.internal'), null);
    assert.equal(open.refusal('10.99.0.1', 'HOOKS.internal.'), null);
    assert.equal(open.refusal('10.99.0.1', 'other.internal'), 'private');
  });

  void it('rejects an allow-list entry that is not a CIDR, an address or a host name', () => {
    for (const bad of ['10.0.0.0/33', '::/129', 'http://127.0.0.1/', 'a b', 'x/8', '*']) {
      assert.throws(() => new DestinationPolicy([bad]), /not a/, bad);
    }
  });
});
