/**
 * A tiny MaxMind DB file (format 2.0, maxmind.github.io/MaxMind-DB), written here so that tests
 * can give the service a GeoIP database of their own: IPv4 networks, each with a City-style
 * record `{ location: { latitude, longitude } }`. Only what such a file needs is written: the
 * binary search tree (24-bit records), the data section and the metadata.
 */

export type MmdbNetwork = Readonly<{ network: string; latitude: number; longitude: number }>;

const control = (type: number, size: number): Buffer => {
  const extended = type > 7;
  const head = (extended ? 0 : type << 5) | (size < 29 ? size : size < 285 ? 29 : 30);
  const bytes = [head];
  if (extended) bytes.push(type - 7);
  if (size >= 29 && size < 285) bytes.push(size - 29);
  else if (size >= 285) bytes.push(((size - 285) >> 8) & 0xff, (size - 285) & 0xff);
  return Buffer.from(bytes);
};

const unsigned = (type: number, value: number): Buffer => {
  const bytes: number[] = [];
  for (let rest = value; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.concat([control(type, bytes.length), Buffer.from(bytes)]);
};

type Value =
  string | number | { uint16: number } | { uint32: number } | { uint64: number } | Value[] | { [key: string]: Value };

/** Encodes a value: strings, doubles, unsigned integers (tagged), arrays and maps. */
const encode = (value: Value): Buffer => {
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    return Buffer.concat([control(2, text.length), text]);
  }
  if (typeof value === 'number') {
    const double = Buffer.alloc(8);
    double.writeDoubleBE(value);
    return Buffer.concat([control(3, 8), double]);
  }
  if (Array.isArray(value)) return Buffer.concat([control(11, value.length), ...value.map(encode)]);
  if ('uint16' in value && typeof value.uint16 === 'number') return unsigned(5, value.uint16);
  if ('uint32' in value && typeof value.uint32 === 'number') return unsigned(6, value.uint32);
  if ('uint64' in value && typeof value.uint64 === 'number') return unsigned(9, value.uint64);
  const entries = Object.entries(value);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([key, item]) => [encode(key), encode(item)])]);
};

type TreeNode = { children: [TreeNode | number | null, TreeNode | number | null] };

/** The bits of `a.b.c.d/len`. */
const networkBits = (network: string): number[] => {
  const [address, length] = network.split('/');
  const bits = address!.split('.').flatMap((octet) => [...Number(octet).toString(2).padStart(8, '0')].map(Number));
  return bits.slice(0, Number(length ?? 32));
};

/** The bytes of a database mapping each network to its location. */
export const mmdbFile = (networks: readonly MmdbNetwork[]): Buffer => {
  const data: Buffer[] = [];
  let dataSize = 0;
  const root: TreeNode = { children: [null, null] };
  const offsets: number[] = [];
  for (const { network, latitude, longitude } of networks) {
    const record = encode({ location: { latitude, longitude } });
    offsets.push(dataSize);
    data.push(record);
    dataSize += record.length;
    const bits = networkBits(network);
    let node = root;
    bits.forEach((bit, index) => {
      if (index === bits.length - 1) {
        node.children[bit as 0 | 1] = -(offsets.length - 1) - 1;
        return;
      }
      let next = node.children[bit as 0 | 1];
      if (typeof next !== 'object' || next === null) {
        next = { children: [null, null] };
        node.children[bit as 0 | 1] = next;
      }
      node = next;
    });
  }
  const nodes: TreeNode[] = [];
  const number = (node: TreeNode): void => {
    nodes.push(node);
    for (const child of node.children) if (typeof child === 'object' && child !== null) number(child);
  };
  number(root);
  const nodeCount = nodes.length;
  const tree = Buffer.alloc(nodeCount * 6);
  nodes.forEach((node, index) => {
    node.children.forEach((child, side) => {
      // A node, "no data" (the node count), or data at an offset past the 16-byte separator.
      const value =
        child === null
          ? nodeCount
          : typeof child === 'number'
            ? nodeCount + 16 + offsets[-child - 1]!
            : nodes.indexOf(child);
      tree.writeUIntBE(value, index * 6 + side * 3, 3);
    });
  });
  const metadata = encode({
    node_count: { uint32: nodeCount },
    record_size: { uint16: 24 },
    ip_version: { uint16: 4 },
    database_type: 'GeoLite2-City',
    languages: ['en'],
    binary_format_major_version: { uint16: 2 },
    binary_format_minor_version: { uint16: 0 },
    build_epoch: { uint64: 1_700_000_000 },
    description: { en: 'dms test database' },
  });
  return Buffer.concat([tree, Buffer.alloc(16), ...data, Buffer.from('abcdef4d61784d696e642e636f6d', 'hex'), metadata]);
};
