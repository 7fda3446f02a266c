import { flag, integer, number, text, type Setting } from '../config/settingKinds.ts';
import { parseRoutes, parseTypePatterns } from './messageRouting.ts';

const DAY = 86_400;

/** Host names separated by commas; empty: no broker (hermes sends nothing, and loses nothing: it waits). */
const hostList = (value: string): boolean =>
  value
    .split(',')
    .map((host) => host.trim())
    .every((host) => /^[A-Za-z0-9.:[\]_-]+$/.test(host));

/**
 * Hermes, the daemon that hands the service's messages to a message broker over STOMP, and its
 * broker: Rucio's `[hermes]` and `[messaging-hermes]` options by their names, kept in `/config`
 * as the other daemons' settings are. The password alone is not kept there (the configuration is
 * an event log anyone with the export sees): it comes from DMS_MESSAGING_HERMES_PASSWORD, and
 * storing `messaging-hermes.password` is refused with that explanation.
 *
 * `routes` and `event_types` are ours (Rucio sends every message to its one `destination`): which
 * messages are sent at all, and which go elsewhere than `destination`.
 */
export const HERMES_SETTINGS = {
  /** Seconds between cycles (Rucio's hermes sleeps 10 s); a cycle delivers everything new before it ends. */
  hermesInterval: number('hermes', 'interval', 1, 0.1, DAY),
  /** Messages sent before their receipts are awaited and the checkpoint moves (Rucio's `--bulk`, 1000). */
  hermesBulk: integer('hermes', 'bulk', 1000, 1, 100_000),
  /**
   * The brokers, by host name or address, comma-separated; the first that answers is used until
   * it fails, then the next (Rucio spreads messages over every address of its aliases, which
   * gives up their order).
   */
  brokers: text('messaging-hermes', 'brokers', '', 'host names separated by commas', hostList),
  /** With SSL, the broker's STOMP+SSL port and the client certificate (Rucio's default: SSL on). */
  useSsl: flag('messaging-hermes', 'use_ssl', true),
  port: integer('messaging-hermes', 'port', 61614, 1, 65_535),
  sslKeyFile: text('messaging-hermes', 'ssl_key_file', ''),
  sslCertFile: text('messaging-hermes', 'ssl_cert_file', ''),
  /** Ours: the authorities that sign the broker's certificate, when not the system's. */
  sslCaFile: text('messaging-hermes', 'ssl_ca_file', ''),
  /** Without SSL, the plain STOMP port and a login (its password from DMS_MESSAGING_HERMES_PASSWORD). */
  nonsslPort: integer('messaging-hermes', 'nonssl_port', 61613, 1, 65_535),
  username: text('messaging-hermes', 'username', ''),
  password: {
    section: 'messaging-hermes',
    option: 'password',
    defaultValue: '',
    allowed: 'nothing: the broker password comes from the environment (DMS_MESSAGING_HERMES_PASSWORD)',
    parse: () => undefined,
    accepts: () => false,
  } satisfies Setting<string>,
  /** The STOMP `host` header (RabbitMQ's virtual host); empty: the broker's host name, as stomp.py sends. */
  brokerVirtualHost: text('messaging-hermes', 'broker_virtual_host', ''),
  /** Where messages go that no route names (Rucio's one destination). */
  destination: text('messaging-hermes', 'destination', '/topic/rucio.events', 'a STOMP destination', (value) =>
    value.trim().startsWith('/'),
  ),
  /** `pattern=destination` pairs, comma-separated, first match wins: `transfer-*=/queue/transfers`. */
  routes: text(
    'messaging-hermes',
    'routes',
    '',
    'pattern=destination pairs separated by commas (patterns of event types with *, destinations from /)',
    (value) => parseRoutes(value) !== undefined,
  ),
  /** Which event types are sent at all: patterns with `*`, comma-separated (default every one). */
  eventTypes: text(
    'messaging-hermes',
    'event_types',
    '*',
    'patterns of event types with *, separated by commas',
    (value) => parseTypePatterns(value) !== undefined,
  ),
} as const;
