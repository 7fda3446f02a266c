import { protocol, rseWithProtocols } from '../api/replicaSupport.ts';
import { newScope } from './dids.ts';
import { linkRses, setRseAttributes } from './posixRses.ts';
import { ruleOverHttp } from './rules.ts';
import { expectStatus, type TestServer } from './server.ts';

type Attributes = Readonly<Record<string, string>>;

type GapOptions = Readonly<{
  /** The file's scope; a new one by default. */
  scope?: string;
  /** The file's name; f1 by default. */
  name?: string;
  /** Attributes of each RSE, besides the hop's `available_for_multihop`. */
  source?: Attributes;
  hop?: Attributes;
  dest?: Attributes;
  /** Links source and destination too: the gap is then their protocols' alone. */
  directLink?: boolean;
}>;

/**
 * The protocol gap a multihop path crosses: a 100-byte file on a source that speaks only root, a
 * destination that speaks only davs, an RSE linked between them that speaks both and is
 * `available_for_multihop`, and root's rule asking for the file at the destination.
 */
export const ruleAcrossProtocolGap = async (server: TestServer, options: GapOptions = {}) => {
  const scope = options.scope ?? (await newScope(server));
  const name = options.name ?? 'f1';
  const source = await rseWithProtocols(server, [{ root: protocol('root', 'src.example.org') }]);
  const hop = await rseWithProtocols(server, [
    { root: protocol('root', 'hop.example.org') },
    { davs: protocol('davs', 'hop.example.org') },
  ]);
  const dest = await rseWithProtocols(server, [{ davs: protocol('davs', 'dst.example.org') }]);
  if (options.source) await setRseAttributes(server, source.rse, options.source);
  await setRseAttributes(server, hop.rse, { available_for_multihop: 'true', ...options.hop });
  if (options.dest) await setRseAttributes(server, dest.rse, options.dest);
  if (options.directLink) await linkRses(server, source.rse, dest.rse);
  await linkRses(server, source.rse, hop.rse);
  await linkRses(server, hop.rse, dest.rse);
  expectStatus(
    await server.root('POST', '/replicas', {
      body: { rse: source.rse, files: [{ scope, name, bytes: 100, adler32: '0cc737eb' }] },
    }),
    201,
  );
  const ruleId = await ruleOverHttp(server, { dids: [{ scope, name }], copies: 1, rse_expression: dest.rse });
  return { scope, source, hop, dest, ruleId };
};
