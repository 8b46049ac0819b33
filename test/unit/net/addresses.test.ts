import t from 'tap'
import { AddressSet, isNonPublic, parseCidr, parseIp } from '../../../src/net/addresses'

t.test('IP addresses as bytes; IPv4-mapped IPv6 is its IPv4 address', async (t) => {
  t.same([...parseIp('127.0.0.1')!], [127, 0, 0, 1])
  t.same([...parseIp('::ffff:127.0.0.1')!], [127, 0, 0, 1])
  t.same([...parseIp('[::ffff:7f00:1]')!], [127, 0, 0, 1], 'the hex spelling the URL parser writes')
  t.same([...parseIp('::1')!], [...new Array<number>(15).fill(0), 1])
  t.same([...parseIp('fe80::1%eth0')!].slice(0, 2), [0xfe, 0x80], 'a zone is ignored')
  t.same([...parseIp('1:2:3:4:5:6:7:8')!], [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8])
  t.same([...parseIp('64:ff9b::10.0.0.1')!].slice(12), [10, 0, 0, 1])
  t.equal(parseIp('example.com'), undefined)
  t.equal(parseIp('127.1'), undefined, 'short forms are the URL parser\'s job, not an address here')
})

t.test('CIDR ranges', async (t) => {
  t.same(parseCidr('10.0.0.0/8'), { bytes: Uint8Array.from([10, 0, 0, 0]), prefix: 8 })
  t.equal(parseCidr('10.0.0.1')!.prefix, 32)
  t.equal(parseCidr('::ffff:10.0.0.0/104')!.prefix, 8, 'a mapped range is the IPv4 range')
  for (const bad of ['10.0.0.0/33', '10.0.0.0/', 'fd00::/129', 'x/8', '10.0.0.0/8/8']) t.equal(parseCidr(bad), undefined, bad)
  const set = new AddressSet(['10.0.0.0/8', '172.16.0.0/12', 'fd00::/8', '192.0.2.7'])
  t.ok(set.has('10.255.1.2'))
  t.ok(set.has('172.31.255.255'))
  t.notOk(set.has('172.32.0.0'))
  t.ok(set.has('fdab::1'))
  t.ok(set.has('::ffff:10.1.1.1'), 'mapped addresses match IPv4 ranges')
  t.ok(set.has('192.0.2.7'))
  t.notOk(set.has('192.0.2.8'))
  t.notOk(set.has('not an ip'))
})

t.test('non-public addresses in every spelling', async (t) => {
  const hosts = (h: string): string => new URL(`http://${h}/`).hostname
  for (const h of [
    '127.0.0.1', '2130706433', '0x7f000001', '127.1', '0177.0.0.1', '[::ffff:127.0.0.1]', '[::1]', '[::]', '0.0.0.0',
    '169.254.169.254', '10.0.0.1', '172.16.5.4', '192.168.0.1', '100.64.0.1', '[fd00::1]', '[fe80::1]', '[fc00::1]',
    '224.0.0.1', '255.255.255.255', '[64:ff9b::a00:1]', '[2002:a00:1::]', '[::127.0.0.1]', '[ff02::1]',
    '[100::1]', '[fec0::1]', '[::ffff:0:7f00:1]', '[2001:db8::1]', '[2001:0:4136:e378::1]',
  ]) {
    t.ok(isNonPublic(hosts(h)), `${h} (${hosts(h)}) is not public`)
  }
  for (const h of ['93.184.216.34', '8.8.8.8', '[2606:4700::1111]', '[64:ff9b::808:808]', '172.32.0.1', '[::ffff:8.8.8.8]']) {
    t.notOk(isNonPublic(hosts(h)), `${h} is public`)
  }
  t.ok(isNonPublic('not an address'), 'what is not an address is not allowed either')
})
