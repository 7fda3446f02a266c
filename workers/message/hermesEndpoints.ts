import { SETTINGS, settingValue, type ConfigSections } from '../../domain/config/settings.ts';
import { parseRoutes, parseTypePatterns, type MessageRouting } from '../../domain/message/messageRouting.ts';
import type { StompEndpoint } from '../../infra/messaging/stompPublisher.ts';

/** The brokers named in `messaging-hermes.brokers`, in order. */
export const brokerHosts = (sections: ConfigSections): string[] =>
  settingValue(sections, SETTINGS.brokers)
    .split(',')
    .map((host) => host.trim())
    .filter(Boolean);

/**
 * How hermes reaches each broker, as Rucio's hermes sets up its connections: with `use_ssl`, the
 * `port` and the client certificate (`ssl_cert_file`, `ssl_key_file`) and no login; without, the
 * `nonssl_port` and `username` with the password from the environment (no username: no login,
 * so the broker's default user, where it has one). The virtual host is
 * `broker_virtual_host`, else the broker's name (what stomp.py sends as `host`).
 */
export const brokerEndpoints = (sections: ConfigSections, password: string | undefined): StompEndpoint[] => {
  const useSsl = settingValue(sections, SETTINGS.useSsl);
  const virtualHost = settingValue(sections, SETTINGS.brokerVirtualHost);
  const keyFile = settingValue(sections, SETTINGS.sslKeyFile);
  const certFile = settingValue(sections, SETTINGS.sslCertFile);
  const caFile = settingValue(sections, SETTINGS.sslCaFile);
  const username = settingValue(sections, SETTINGS.username);
  return brokerHosts(sections).map((host) => ({
    host,
    virtualHost: virtualHost === '' ? host : virtualHost,
    ...(useSsl
      ? {
          port: settingValue(sections, SETTINGS.port),
          tls: {
            ...(keyFile ? { keyFile } : {}),
            ...(certFile ? { certFile } : {}),
            ...(caFile ? { caFile } : {}),
          },
        }
      : {
          port: settingValue(sections, SETTINGS.nonsslPort),
          // Without a username no login is sent: the broker's default user, if it has one (RabbitMQ's guest).
          ...(username === '' ? {} : { login: username, passcode: password ?? '' }),
        }),
  }));
};

/** Which messages go where (domain/message/messageRouting.ts), from the declared options. */
export const messageRouting = (sections: ConfigSections): MessageRouting => ({
  destination: settingValue(sections, SETTINGS.destination).trim(),
  routes: parseRoutes(settingValue(sections, SETTINGS.routes)) ?? [],
  eventTypes: parseTypePatterns(settingValue(sections, SETTINGS.eventTypes)) ?? ['*'],
});
